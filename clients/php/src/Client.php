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
    /** The account: read it, set the console password. */
    public readonly Resource\Account $account;
    /** Pay as you Go: the budget of a period. */
    public readonly Resource\Budget $budget;
    /** Webhook endpoints: signed events out, their delivery log. */
    public readonly Resource\Webhooks $webhooks;
    /** Asynchronous queries: submit, read in pages, list, cancel, wait. */
    public readonly Resource\Jobs $jobs;
    /** The account's alert thresholds. */
    public readonly Resource\Alerts $alerts;
    /** The account's agent tools: what its agents may call on /mcp. */
    public readonly Resource\Tools $tools;
    /** The account's MCP settings: the default price limit of a tool call. */
    public readonly Resource\Mcp $mcp;
    /** The plans on offer. */
    public readonly Resource\Plans $plans;
    /** The plan, subscription, card and invoices. */
    public readonly Resource\Billing $billing;
    /** Being paid as an owner. */
    public readonly Resource\Payouts $payouts;
    /** OAuth clients of the account. */
    public readonly Resource\OAuthClients $oauthClients;
    /** Embed tokens for web pages (mint them on your server). */
    public readonly Resource\EmbedTokens $embedTokens;
    /** HS256 secrets to mint embed tokens offline. */
    public readonly Resource\EmbedSecrets $embedSecrets;
    /** The account's recent calls. */
    public readonly Resource\Calls $calls;
    /** Whether your keys may be used from other origins' web pages. */
    public readonly Resource\Cors $cors;
    /** The warehouse types this gateway connects to. */
    public readonly Resource\Connectors $connectors;
    /** Your warehouse connections (owner). */
    public readonly Resource\Connections $connections;
    /** Your marketplace listings (owner). */
    public readonly Resource\Listings $listings;
    /** Your earnings statements (owner). */
    public readonly Resource\Statements $statements;
    /** Listed analytics: search, details, try-tokens for free previews. */
    public readonly Resource\Marketplace $marketplace;

    private readonly Transport $transport;

    /**
     * @param string $baseUrl the gateway, e.g. http://127.0.0.1:8787 (a path prefix is kept)
     * @param ?string $apiKey an API key (qry_live_…); or
     * @param ?OAuthCredentials $oauth an OAuth client (client-credentials grant)
     * @param ?float $timeout seconds for a whole call, retries and waits included (null: none)
     * @param string|Http\HttpBackend $http 'auto' (the cURL extension when loaded, else PHP's
     *     http stream wrapper, which needs allow_url_fopen=On), 'curl' or 'streams' (a
     *     \LogicException says what to change when neither works); or a backend the client sends
     *     every request through (the OAuth token request too): your own, or in tests a
     *     Testing\MockBackend, which answers from a queue and records what was sent
     */
    public function __construct(
        string $baseUrl,
        ?string $apiKey = null,
        ?OAuthCredentials $oauth = null,
        ?float $timeout = 120.0,
        RetryPolicy $retry = new RetryPolicy(),
        string $userAgent = 'quarry-client-php/0.1.0',
        string|Http\HttpBackend $http = 'auto',
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
        $this->account = new Resource\Account($transport);
        $this->budget = new Resource\Budget($transport);
        $this->webhooks = new Resource\Webhooks($transport);
        $this->jobs = new Resource\Jobs($transport);
        $this->alerts = new Resource\Alerts($transport);
        $this->tools = new Resource\Tools($transport);
        $this->mcp = new Resource\Mcp($transport);
        $this->plans = new Resource\Plans($transport);
        $this->billing = new Resource\Billing($transport);
        $this->payouts = new Resource\Payouts($transport);
        $this->oauthClients = new Resource\OAuthClients($transport);
        $this->embedTokens = new Resource\EmbedTokens($transport);
        $this->embedSecrets = new Resource\EmbedSecrets($transport);
        $this->calls = new Resource\Calls($transport);
        $this->cors = new Resource\Cors($transport);
        $this->connectors = new Resource\Connectors($transport);
        $this->connections = new Resource\Connections($transport);
        $this->listings = new Resource\Listings($transport);
        $this->statements = new Resource\Statements($transport);
        $this->marketplace = new Resource\Marketplace($transport);
    }

    /**
     * Signs up an account (POST /v1/accounts, no credential needed): ['account' => Model\Account,
     * 'key' => ApiKey], the key's secret shown this once. Not repeated after a failure that may
     * have created the account. $http picks (or is) the HTTP backend as for the constructor.
     *
     * @return array{account: Model\Account, key: ApiKey}
     */
    public static function signUp(
        string $baseUrl,
        string $email,
        string $name,
        ?float $timeout = 120.0,
        RetryPolicy $retry = new RetryPolicy(),
        string $userAgent = 'quarry-client-php/0.1.0',
        string|Http\HttpBackend $http = 'auto',
    ): array {
        $transport = new Transport($baseUrl, null, null, $timeout, $retry, $userAgent, $http);
        $answer = $transport->send('POST', '/v1/accounts', body: ['email' => $email, 'name' => $name], idempotent: false);
        return ['account' => Model\Account::fromArray($answer['account']), 'key' => ApiKey::fromArray($answer['key'])];
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

    /**
     * Runs an analytic once and yields its result page by page ($pageSize rows, 1–10,000): one
     * warehouse query and one charge, the following pages read from the gateway's snapshot with
     * meta.next, free. A snapshot gone midway throws a QuarryException with code CURSOR_EXPIRED
     * (410): rerun to start over.
     *
     * @param array<string, mixed> $params
     * @return \Generator<int, QueryResult>
     */
    public function pages(string $source, array $params = [], int $pageSize = 10000, ?int $maxCredits = null): \Generator
    {
        $body = ['source' => $source, 'params' => $params === [] ? new \stdClass() : $params, 'page_size' => $pageSize];
        if ($maxCredits !== null) {
            $body['max_credits'] = $maxCredits;
        }
        while (true) {
            $headers = ['Idempotency-Key' => 'qc-' . bin2hex(random_bytes(16))];
            $page = QueryResult::fromArray($this->transport->send('POST', '/v1/query', body: $body, headers: $headers));
            yield $page;
            if ($page->meta->next === null || $page->meta->next === '') {
                return;
            }
            $body = ['source' => $source, 'cursor' => $page->meta->next];
        }
    }
}
