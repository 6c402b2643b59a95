<?php

declare(strict_types=1);

namespace Quarry;

use Quarry\Exception\NetworkException;
use Quarry\Exception\QuarryException;
use Quarry\Exception\TimeoutException;
use Quarry\Exception\UnauthenticatedException;

/**
 * One HTTP call to the gateway with everything around it: the credential (API key, or OAuth
 * token fetched again once when the API answers 401), typed exceptions, bounded retries with
 * backoff, and one deadline for the whole call, retries and waits included. PHP's own http
 * stream wrapper and json: no extension beyond the standard build.
 *
 * @internal
 */
final class Transport
{
    private readonly string $base;

    public function __construct(
        string $baseUrl,
        private readonly ?string $apiKey,
        private readonly ?TokenSource $tokens,
        private readonly ?float $timeout,
        private readonly RetryPolicy $retry,
        private readonly string $userAgent,
    ) {
        $this->base = rtrim($baseUrl, '/');
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
     * One HTTP exchange: [status, headers with lower-case names, body]. No answer throws
     * NetworkException; an answer that did not come in time TimeoutException.
     *
     * @param array<string, string> $headers
     * @return array{int, array<string, string>, string}
     */
    public function raw(string $method, string $url, ?string $body, array $headers, float $timeout): array
    {
        $lines = [];
        foreach ($headers as $name => $value) {
            $lines[] = "{$name}: {$value}";
        }
        $context = stream_context_create(['http' => [
            'method' => $method,
            'header' => implode("\r\n", $lines),
            'content' => $body ?? '',
            'timeout' => max($timeout, 0.001),
            'ignore_errors' => true,
            'follow_location' => 0,
            'protocol_version' => 1.1,
        ]]);
        $started = self::now();
        $problem = '';
        set_error_handler(static function (int $no, string $message) use (&$problem): bool {
            $problem = $message;
            return true;
        });
        try {
            $stream = fopen($url, 'rb', false, $context);
            $text = $stream === false ? false : stream_get_contents($stream);
            $meta = $stream === false ? null : stream_get_meta_data($stream);
        } finally {
            restore_error_handler();
        }
        if ($stream !== false) {
            fclose($stream);
        }
        if ($stream === false || $text === false || ($meta['timed_out'] ?? false)) {
            // The wrapper reports a read timeout as a failed request: tell it by the time spent
            // (its timer and ours differ by a few milliseconds).
            if (($meta['timed_out'] ?? false) || self::now() - $started >= $timeout - 0.05) {
                throw new TimeoutException('TIMEOUT', 0, "{$method} {$url} did not answer within {$timeout} s.");
            }
            throw new NetworkException('NETWORK_ERROR', 0, "No answer from {$this->base} ({$method}): {$problem}");
        }
        $status = 0;
        $answerHeaders = [];
        foreach ($meta['wrapper_data'] ?? [] as $line) {
            if (preg_match('#^HTTP/\S+\s+(\d{3})#', $line, $m) === 1) {
                $status = (int) $m[1];
                $answerHeaders = [];
            } elseif (str_contains($line, ':')) {
                [$name, $value] = explode(':', $line, 2);
                $answerHeaders[strtolower(trim($name))] = trim($value);
            }
        }
        return [$status, $answerHeaders, $text];
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
