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
 * backoff, and one deadline for the whole call, retries and waits included. HTTP goes through
 * the cURL extension when it is loaded, else PHP's own http stream wrapper (which needs
 * allow_url_fopen=On); json for the bodies.
 *
 * @internal
 */
final class Transport
{
    private readonly string $base;
    /** 'curl' or 'streams'. */
    private readonly string $backend;

    /** @param string $http 'auto' (cURL when loaded, else streams), 'curl' or 'streams' */
    public function __construct(
        string $baseUrl,
        private readonly ?string $apiKey,
        private readonly ?TokenSource $tokens,
        private readonly ?float $timeout,
        private readonly RetryPolicy $retry,
        private readonly string $userAgent,
        string $http = 'auto',
    ) {
        $this->base = rtrim($baseUrl, '/');
        $this->backend = self::chooseBackend($http, extension_loaded('curl'), filter_var(ini_get('allow_url_fopen'), FILTER_VALIDATE_BOOLEAN));
    }

    /**
     * The HTTP backend for $wanted ('auto', 'curl' or 'streams') on this PHP: a LogicException
     * saying what to change when the one asked for (or, for 'auto', either) cannot work.
     */
    public static function chooseBackend(string $wanted, bool $curlLoaded, bool $urlFopen): string
    {
        $curl = 'the cURL extension is not loaded (install php-curl, or enable extension=curl in php.ini)';
        $streams = 'allow_url_fopen is Off, so the http stream wrapper cannot open URLs (set allow_url_fopen=On in php.ini)';
        return match ($wanted) {
            'auto' => $curlLoaded ? 'curl' : ($urlFopen ? 'streams'
                : throw new \LogicException("Quarry\\Client cannot make HTTP requests on this PHP: {$curl}, and {$streams}. Do either.")),
            'curl' => $curlLoaded ? 'curl' : throw new \LogicException("Quarry\\Client: http: 'curl' was asked for, but {$curl}."),
            'streams' => $urlFopen ? 'streams' : throw new \LogicException("Quarry\\Client: http: 'streams' was asked for, but {$streams}."),
            default => throw new \InvalidArgumentException("http must be 'auto', 'curl' or 'streams', got \"{$wanted}\"."),
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
     * One HTTP exchange: [status, headers with lower-case names, body]. No answer throws
     * NetworkException; an answer that did not come in time TimeoutException.
     *
     * @param array<string, string> $headers
     * @return array{int, array<string, string>, string}
     */
    public function raw(string $method, string $url, ?string $body, array $headers, float $timeout): array
    {
        return $this->backend === 'curl'
            ? $this->rawCurl($method, $url, $body, $headers, $timeout)
            : $this->rawStreams($method, $url, $body, $headers, $timeout);
    }

    /**
     * @param array<string, string> $headers
     * @return array{int, array<string, string>, string}
     */
    private function rawCurl(string $method, string $url, ?string $body, array $headers, float $timeout): array
    {
        $lines = ['Expect:']; // no 100-continue round trip before a body
        foreach ($headers as $name => $value) {
            $lines[] = "{$name}: {$value}";
        }
        $answerHeaders = [];
        $handle = curl_init($url);
        $ms = max(1, (int) ceil($timeout * 1000));
        curl_setopt_array($handle, [
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $lines,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_TIMEOUT_MS => $ms,
            CURLOPT_CONNECTTIMEOUT_MS => $ms,
            CURLOPT_NOSIGNAL => true,
            CURLOPT_HEADERFUNCTION => static function ($h, string $line) use (&$answerHeaders): int {
                if (preg_match('#^HTTP/\S+\s+\d{3}#', $line) === 1) {
                    $answerHeaders = []; // a new response (after a 100 Continue)
                } elseif (str_contains($line, ':')) {
                    [$name, $value] = explode(':', $line, 2);
                    $answerHeaders[strtolower(trim($name))] = trim($value);
                }
                return strlen($line);
            },
        ]);
        if ($body !== null) {
            curl_setopt($handle, CURLOPT_POSTFIELDS, $body);
        }
        $text = curl_exec($handle);
        $errno = curl_errno($handle);
        $error = curl_error($handle);
        $status = (int) curl_getinfo($handle, CURLINFO_RESPONSE_CODE);
        curl_close($handle);
        if ($errno === CURLE_OPERATION_TIMEDOUT) {
            throw new TimeoutException('TIMEOUT', 0, "{$method} {$url} did not answer within {$timeout} s.");
        }
        if ($text === false || $errno !== 0) {
            throw new NetworkException('NETWORK_ERROR', 0, "No answer from {$this->base} ({$method}): {$error}");
        }
        return [$status, $answerHeaders, (string) $text];
    }

    /**
     * @param array<string, string> $headers
     * @return array{int, array<string, string>, string}
     */
    private function rawStreams(string $method, string $url, ?string $body, array $headers, float $timeout): array
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
