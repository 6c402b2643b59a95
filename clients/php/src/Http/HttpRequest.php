<?php

declare(strict_types=1);

namespace Quarry\Http;

/** One HTTP request as the client hands it to an HttpBackend (and MockBackend records it). */
final class HttpRequest
{
    /**
     * @param string $method GET, POST, PATCH, PUT or DELETE
     * @param string $url the absolute URL, query string included
     * @param array<string, string> $headers as the client names them (Authorization, Idempotency-Key, …)
     * @param ?string $body the encoded body (JSON, or a form for the OAuth token request); null for none
     * @param float $timeout seconds this exchange may take: what is left of the call's timeout
     */
    public function __construct(
        public readonly string $method,
        public readonly string $url,
        public readonly array $headers = [],
        public readonly ?string $body = null,
        public readonly float $timeout = 120.0,
    ) {
    }

    /** The header named $name, whatever its case; null when not sent. */
    public function header(string $name): ?string
    {
        foreach ($this->headers as $key => $value) {
            if (strcasecmp((string) $key, $name) === 0) {
                return $value;
            }
        }
        return null;
    }

    /** scheme://host[:port] of the URL: the server it goes to. */
    public function origin(): string
    {
        $parts = parse_url($this->url);
        $port = isset($parts['port']) ? ":{$parts['port']}" : '';
        return ($parts['scheme'] ?? 'http') . '://' . ($parts['host'] ?? '') . $port;
    }

    /** The URL's path (/v1/query), as sent: percent-encoding kept. */
    public function path(): string
    {
        return (string) parse_url($this->url, PHP_URL_PATH);
    }

    /**
     * The query string's parameters, decoded: a repeated key (a list param) gives a list.
     *
     * @return array<string, string|list<string>>
     */
    public function query(): array
    {
        $params = [];
        $query = (string) parse_url($this->url, PHP_URL_QUERY);
        foreach ($query === '' ? [] : explode('&', $query) as $pair) {
            [$name, $value] = array_map('urldecode', explode('=', $pair, 2) + [1 => '']);
            if (!array_key_exists($name, $params)) {
                $params[$name] = $value;
            } else {
                $params[$name] = [...(array) $params[$name], $value];
            }
        }
        return $params;
    }

    /**
     * The JSON body decoded to arrays (an empty JSON object gives []); null when there is no body.
     *
     * @throws \JsonException the body is not JSON (the OAuth token request's is a form)
     */
    public function json(): mixed
    {
        return $this->body === null || $this->body === '' ? null : json_decode($this->body, true, 512, JSON_THROW_ON_ERROR);
    }
}
