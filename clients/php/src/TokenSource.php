<?php

declare(strict_types=1);

namespace Quarry;

use Quarry\Exception\OAuthException;

/**
 * Bearer tokens for one OAuth client (client-credentials grant, POST /oauth/token with HTTP
 * Basic): cached, fetched again a little before they expire (60 s, or a tenth of their life
 * when shorter), forgotten when the API refuses one.
 */
final class TokenSource
{
    private const MAX_REFRESH_MARGIN = 60.0;
    private const DEFAULT_LIFETIME = 300.0;

    private ?string $token = null;
    private float $refreshAt = 0.0;

    /** @var \Closure(): float */
    private readonly \Closure $now;

    /**
     * @param \Closure(string, string, array<string, string>, float): array{int, array<string, string>, string} $post
     * @param ?\Closure(): float $now a monotonic clock in seconds (tests move it)
     */
    public function __construct(
        private readonly string $url,
        private readonly OAuthCredentials $credentials,
        private readonly \Closure $post,
        ?\Closure $now = null,
    ) {
        $this->now = $now ?? static fn (): float => hrtime(true) / 1e9;
    }

    /** A token valid for a while yet: the cached one, or one fetched now. */
    public function token(float $timeout): string
    {
        if ($this->token !== null && ($this->now)() < $this->refreshAt) {
            return $this->token;
        }
        $form = ['grant_type' => 'client_credentials'];
        $scope = $this->credentials->scope;
        if ($scope !== null && $scope !== '' && $scope !== []) {
            $form['scope'] = is_array($scope) ? implode(' ', $scope) : $scope;
        }
        // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined for HTTP Basic.
        $basic = base64_encode(urlencode($this->credentials->clientId) . ':' . urlencode($this->credentials->clientSecret));
        [$status, $headers, $body] = ($this->post)($this->url, http_build_query($form), [
            'Authorization' => "Basic {$basic}",
            'Content-Type' => 'application/x-www-form-urlencoded',
            'Accept' => 'application/json',
        ], $timeout);
        if ($status < 200 || $status > 299) {
            throw ErrorFactory::fromResponse($status, $headers, $body);
        }
        $answer = json_decode($body, true);
        $token = is_array($answer) ? ($answer['access_token'] ?? null) : null;
        if (!is_string($token) || $token === '' || strtolower((string) ($answer['token_type'] ?? '')) !== 'bearer') {
            throw new OAuthException(
                'invalid_token_response',
                $status,
                'The token endpoint answered without a bearer access_token; check the gateway URL.',
            );
        }
        $expiresIn = $answer['expires_in'] ?? null;
        $lifetime = (is_int($expiresIn) || is_float($expiresIn)) && $expiresIn > 0 ? (float) $expiresIn : self::DEFAULT_LIFETIME;
        $this->refreshAt = ($this->now)() + $lifetime - min(self::MAX_REFRESH_MARGIN, $lifetime / 10);
        return $this->token = $token;
    }

    /** Forgets $token (the API refused it), so the next token() fetches a new one. */
    public function invalidate(string $token): void
    {
        if ($this->token === $token) {
            $this->token = null;
        }
    }
}
