<?php

declare(strict_types=1);

namespace Quarry;

/**
 * A client for one Quarry gateway, authenticated by an API key or an OAuth client.
 *
 *     $quarry = new Quarry\Client('http://127.0.0.1:8787', apiKey: getenv('QUARRY_API_KEY'));
 *     $rows = $quarry->query('sales-by-region', ['year' => 2024])->results;
 */
final class Client implements ClientInterface
{
    /** Runs analytics with query-string params. */
    public readonly Analytics $analytics;
    /** Creates, lists and revokes API keys. */
    public readonly Keys $keys;
    /** Reads the account's usage. */
    public readonly Usage $usage;

    private readonly Transport $transport;

    /**
     * @param string $baseUrl the gateway, e.g. http://127.0.0.1:8787 (a path prefix is kept)
     * @param ?string $apiKey an API key (qry_live_…); or
     * @param ?OAuthCredentials $oauth an OAuth client (client-credentials grant)
     * @param ?float $timeout seconds for a whole call, retries and waits included (null: none)
     * @param string $http 'auto' (the cURL extension when loaded, else PHP's http stream wrapper,
     *     which needs allow_url_fopen=On), 'curl' or 'streams'; a \LogicException says what to
     *     change when neither works
     */
    public function __construct(
        string $baseUrl,
        ?string $apiKey = null,
        ?OAuthCredentials $oauth = null,
        ?float $timeout = 120.0,
        RetryPolicy $retry = new RetryPolicy(),
        string $userAgent = 'quarry-client-php/0.1.0',
        string $http = 'auto',
    ) {
        $scheme = parse_url($baseUrl, PHP_URL_SCHEME);
        if ($scheme !== 'http' && $scheme !== 'https') {
            throw new \InvalidArgumentException("baseUrl must be an absolute http(s) URL such as http://127.0.0.1:8787, got \"{$baseUrl}\"");
        }
        if (($apiKey === null || $apiKey === '') === ($oauth === null)) {
            throw new \InvalidArgumentException('Give exactly one of apiKey (qry_live_…) or oauth (OAuthCredentials).');
        }
        $transport = null;
        $tokens = $oauth === null ? null : new TokenSource(
            rtrim($baseUrl, '/') . '/oauth/token',
            $oauth,
            static function (string $url, string $body, array $headers, float $timeout) use (&$transport, $userAgent): array {
                return $transport->raw('POST', $url, $body, $headers + ['User-Agent' => $userAgent], $timeout);
            },
        );
        $transport = new Transport($baseUrl, $apiKey, $tokens, $timeout, $retry, $userAgent, $http);
        $this->transport = $transport;
        $this->analytics = new Analytics($transport);
        $this->keys = new Keys($transport);
        $this->usage = new Usage($transport);
    }

    /**
     * Runs an analytic with typed params (POST /v1/query). Sends an Idempotency-Key (default: a
     * random one per call), the same on every retry, so a repeated query is answered and charged
     * once. $noCache bypasses the gateway's result cache. $maxCredits: a call that would cost more
     * throws PriceAboveLimitException (409 PRICE_ABOVE_LIMIT), nothing run or charged.
     *
     * @param array<string, mixed> $params
     */
    public function query(
        string $source,
        array $params = [],
        bool $noCache = false,
        ?string $idempotencyKey = null,
        ?int $maxCredits = null,
    ): QueryResult
    {
        $headers = ['Idempotency-Key' => $idempotencyKey ?? 'qc-' . bin2hex(random_bytes(16))];
        if ($noCache) {
            $headers['Cache-Control'] = 'no-cache';
        }
        // An empty PHP array would encode as a JSON list: params are always an object.
        $body = ['source' => $source, 'params' => $params === [] ? new \stdClass() : $params];
        if ($maxCredits !== null) {
            $body['max_credits'] = $maxCredits;
        }
        return QueryResult::fromArray($this->transport->send('POST', '/v1/query', body: $body, headers: $headers));
    }
}
