<?php

declare(strict_types=1);

namespace Quarry\Http;

/** One HTTP answer as an HttpBackend returns it: status, headers, the body unparsed. */
final class HttpResponse
{
    /** @var array<string, string> header names in lower case */
    public readonly array $headers;

    /** @param array<string, string> $headers names in any case (kept in lower case; for a repeated header, the last) */
    public function __construct(
        public readonly int $status,
        array $headers = [],
        public readonly string $body = '',
    ) {
        $lower = [];
        foreach ($headers as $name => $value) {
            $lower[strtolower((string) $name)] = (string) $value;
        }
        $this->headers = $lower;
    }

    /** The header named $name, whatever its case; null when absent. */
    public function header(string $name): ?string
    {
        return $this->headers[strtolower($name)] ?? null;
    }
}
