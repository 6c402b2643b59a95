<?php

declare(strict_types=1);

namespace Quarry;

/** Runs analytics with query-string params ($client->analytics). */
final class Analytics
{
    use Resource\OwnerAnalytics;

    /** @internal */
    public function __construct(private readonly Transport $transport)
    {
    }

    /**
     * Runs $name with GET /v1/analytics/<name>: a list becomes repeated keys, null values are
     * left out, and the gateway coerces the values.
     *
     * @param array<string, mixed> $params
     */
    public function get(string $name, array $params = [], bool $noCache = false): QueryResult
    {
        $headers = $noCache ? ['Cache-Control' => 'no-cache'] : [];
        return QueryResult::fromArray($this->transport->send('GET', '/v1/analytics/' . rawurlencode($name), $params, headers: $headers));
    }
}
