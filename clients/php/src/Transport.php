<?php

declare(strict_types=1);

namespace Quarry;

use Quarry\Exception\QuarryException;
use Quarry\Exception\TimeoutException;
use Quarry\Exception\UnauthenticatedException;
use Quarry\Http\CurlBackend;
use Quarry\Http\HttpBackend;
use Quarry\Http\HttpRequest;
use Quarry\Http\StreamsBackend;

/**
 * One HTTP call to the gateway with everything around it: the credential (API key, or OAuth
 * token fetched again once when the API answers 401), typed exceptions, bounded retries with
 * backoff, and one deadline for the whole call, retries and waits included. HTTP goes through
 * an Http\HttpBackend: the cURL extension when it is loaded, else PHP's own http stream wrapper
 * (which needs allow_url_fopen=On), or the one given (a Testing\MockBackend in tests); json for
 * the bodies.
 *
 * @internal
 */
final class Transport
{
    private readonly string $base;
    private readonly HttpBackend $backend;

    /** @param string|HttpBackend $http 'auto' (cURL when loaded, else streams), 'curl', 'streams' or a backend */
    public function __construct(
        string $baseUrl,
        private readonly ?string $apiKey,
        private readonly ?TokenSource $tokens,
        private readonly ?float $timeout,
        private readonly RetryPolicy $retry,
        private readonly string $userAgent,
        string|HttpBackend $http = 'auto',
    ) {
        $this->base = rtrim($baseUrl, '/');
        $this->backend = $http instanceof HttpBackend ? $http : match (
            self::chooseBackend($http, extension_loaded('curl'), filter_var(ini_get('allow_url_fopen'), FILTER_VALIDATE_BOOLEAN))
        ) {
            'curl' => new CurlBackend(),
            default => new StreamsBackend(),
        };
    }

    /**
     * The HTTP backend for $wanted ('auto', 'curl' or 'streams') on this PHP: a LogicException
     * saying what to change when the one asked for (or, for 'auto', either) cannot work.
     */
    public static function chooseBackend(string $wanted, bool $curlLoaded, bool $urlFopen): string
    {
        $curl = CurlBackend::MISSING;
        $streams = StreamsBackend::MISSING;
        return match ($wanted) {
            'auto' => $curlLoaded ? 'curl' : ($urlFopen ? 'streams'
                : throw new \LogicException("Quarry\\Client cannot make HTTP requests on this PHP: {$curl}, and {$streams}. Do either.")),
            'curl' => $curlLoaded ? 'curl' : throw new \LogicException("Quarry\\Client: http: 'curl' was asked for, but {$curl}."),
            'streams' => $urlFopen ? 'streams' : throw new \LogicException("Quarry\\Client: http: 'streams' was asked for, but {$streams}."),
            default => throw new \InvalidArgumentException("http must be 'auto', 'curl', 'streams' or a Quarry\\Http\\HttpBackend, got \"{$wanted}\"."),
        };
    }

    /**
     * Sends one API call; returns the decoded JSON body (null for 204) or throws a QuarryException.
     * A list value in $query becomes repeated keys; null values are left out.
     *
     * @param array<string, mixed> $query
     * @param array<string, string> $headers
     */
    public function send(
        string $method,
        string $path,
        array $query = [],
        mixed $body = null,
        array $headers = [],
        bool $idempotent = true,
    ): mixed {
        $deadline = $this->timeout === null ? null : self::now() + $this->timeout;
        $url = $this->base . $path;
        $pairs = [];
        foreach ($query as $name => $value) {
            foreach (is_array($value) ? $value : [$value] as $item) {
                if ($item !== null) {
                    $text = is_bool($item) ? ($item ? 'true' : 'false') : (string) $item;
                    $pairs[] = urlencode((string) $name) . '=' . urlencode($text);
                }
            }
        }
        if ($pairs !== []) {
            $url .= '?' . implode('&', $pairs);
        }
        $payload = $body === null ? null : json_encode($body, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
        $reauthorized = false;
        $last = null;
        for ($retry = 0;;) {
            $remaining = $deadline === null ? 3600.0 : $deadline - self::now();
            try {
                if ($remaining <= 0) {
                    throw new TimeoutException('TIMEOUT', 0, 'no time left');
                }
                return $this->attempt($method, $url, $payload, $headers, $remaining);
            } catch (TimeoutException $e) {
                throw new TimeoutException(
                    'TIMEOUT',
                    0,
                    "{$method} {$path} did not finish within {$this->timeout} s" . ($last ? " (last error: {$last->errorCode})." : '.'),
                    previous: $last ?? $e,
                );
            } catch (QuarryException $e) {
                if ($e instanceof UnauthenticatedException && $this->tokens !== null && !$reauthorized) {
                    $reauthorized = true; // the token may have been revoked or rotated early: one fresh token
                    continue;
                }
                $last = $e;
                $delay = $this->retry->delay($e, $retry, $idempotent);
                if ($delay === null || ($deadline !== null && self::now() + $delay >= $deadline)) {
                    throw $e;
                }
                usleep((int) ($delay * 1e6));
                $retry++;
            }
        }
    }

    /**
     * One HTTP exchange through the backend: [status, headers with lower-case names, body]. No
     * answer throws NetworkException; an answer that did not come in time TimeoutException.
     *
     * @param array<string, string> $headers
     * @return array{int, array<string, string>, string}
     */
    public function raw(string $method, string $url, ?string $body, array $headers, float $timeout): array
    {
        $answer = $this->backend->send(new HttpRequest($method, $url, $headers, $body, $timeout));
        return [$answer->status, $answer->headers, $answer->body];
    }

    /** @param array<string, string> $extra */
    private function attempt(string $method, string $url, ?string $payload, array $extra, float $timeout): mixed
    {
        $headers = ['Accept' => 'application/json', 'User-Agent' => $this->userAgent] + $extra;
        if ($payload !== null) {
            $headers['Content-Type'] = 'application/json';
        }
        $token = $this->tokens !== null ? $this->tokens->token($timeout) : (string) $this->apiKey;
        if ($token !== '') { // sign-up is the one call without a credential
            $headers['Authorization'] = "Bearer {$token}";
        }
        [$status, $answerHeaders, $body] = $this->raw($method, $url, $payload, $headers, $timeout);
        if ($status < 200 || $status > 299) {
            if ($status === 401) {
                $this->tokens?->invalidate($token);
            }
            throw ErrorFactory::fromResponse($status, $answerHeaders, $body);
        }
        if ($status === 204 || $body === '') {
            return null;
        }
        try {
            return json_decode($body, true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
        } catch (\JsonException $e) {
            throw new QuarryException(
                'INVALID_RESPONSE',
                $status,
                'The gateway answered with a body that is not JSON; check the base URL.',
                $answerHeaders['x-request-id'] ?? null,
                previous: $e,
            );
        }
    }

    private static function now(): float
    {
        return hrtime(true) / 1e9;
    }
}
