<?php

declare(strict_types=1);

namespace Quarry\Http;

use Quarry\Exception\NetworkException;
use Quarry\Exception\TimeoutException;

/**
 * HTTP through PHP's own http stream wrapper (needs allow_url_fopen=On): what `http: 'streams'`
 * (and 'auto', when cURL is not loaded) picks.
 */
final class StreamsBackend implements HttpBackend
{
    /** @internal What is missing when the stream wrapper cannot be used. */
    public const MISSING = 'allow_url_fopen is Off, so the http stream wrapper cannot open URLs (set allow_url_fopen=On in php.ini)';

    /** @throws \LogicException allow_url_fopen is Off */
    public function __construct()
    {
        if (!filter_var(ini_get('allow_url_fopen'), FILTER_VALIDATE_BOOLEAN)) {
            throw new \LogicException('Quarry\\Http\\StreamsBackend: ' . self::MISSING . '.');
        }
    }

    public function send(HttpRequest $request): HttpResponse
    {
        $method = $request->method;
        $timeout = $request->timeout;
        $lines = [];
        foreach ($request->headers as $name => $value) {
            $lines[] = "{$name}: {$value}";
        }
        $context = stream_context_create(['http' => [
            'method' => $method,
            'header' => implode("\r\n", $lines),
            'content' => $request->body ?? '',
            'timeout' => max($timeout, 0.001),
            'ignore_errors' => true,
            'follow_location' => 0,
            'protocol_version' => 1.1,
        ]]);
        $started = hrtime(true) / 1e9;
        $problem = '';
        set_error_handler(static function (int $no, string $message) use (&$problem): bool {
            $problem = $message;
            return true;
        });
        try {
            $stream = fopen($request->url, 'rb', false, $context);
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
            if (($meta['timed_out'] ?? false) || hrtime(true) / 1e9 - $started >= $timeout - 0.05) {
                throw new TimeoutException('TIMEOUT', 0, "{$method} {$request->url} did not answer within {$timeout} s.");
            }
            throw new NetworkException('NETWORK_ERROR', 0, "No answer from {$request->origin()} ({$method}): {$problem}");
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
        return new HttpResponse($status, $answerHeaders, $text);
    }
}
