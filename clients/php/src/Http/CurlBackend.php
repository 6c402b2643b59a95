<?php

declare(strict_types=1);

namespace Quarry\Http;

use Quarry\Exception\NetworkException;
use Quarry\Exception\TimeoutException;

/** HTTP through the cURL extension: what `http: 'curl'` (and 'auto', when cURL is loaded) picks. */
final class CurlBackend implements HttpBackend
{
    /** @internal What is missing when cURL cannot be used. */
    public const MISSING = 'the cURL extension is not loaded (install php-curl, or enable extension=curl in php.ini)';

    /** @throws \LogicException the cURL extension is not loaded */
    public function __construct()
    {
        if (!extension_loaded('curl')) {
            throw new \LogicException('Quarry\\Http\\CurlBackend: ' . self::MISSING . '.');
        }
    }

    public function send(HttpRequest $request): HttpResponse
    {
        $method = $request->method;
        $lines = ['Expect:']; // no 100-continue round trip before a body
        foreach ($request->headers as $name => $value) {
            $lines[] = "{$name}: {$value}";
        }
        $answerHeaders = [];
        $handle = curl_init($request->url);
        $ms = max(1, (int) ceil($request->timeout * 1000));
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
        if ($request->body !== null) {
            curl_setopt($handle, CURLOPT_POSTFIELDS, $request->body);
        }
        $text = curl_exec($handle);
        $errno = curl_errno($handle);
        $error = curl_error($handle);
        $status = (int) curl_getinfo($handle, CURLINFO_RESPONSE_CODE);
        curl_close($handle);
        if ($errno === CURLE_OPERATION_TIMEDOUT) {
            throw new TimeoutException('TIMEOUT', 0, "{$method} {$request->url} did not answer within {$request->timeout} s.");
        }
        if ($text === false || $errno !== 0) {
            throw new NetworkException('NETWORK_ERROR', 0, "No answer from {$request->origin()} ({$method}): {$error}");
        }
        return new HttpResponse($status, $answerHeaders, (string) $text);
    }
}
