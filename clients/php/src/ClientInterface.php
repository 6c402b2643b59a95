<?php

declare(strict_types=1);

namespace Quarry;

/**
 * What code that runs queries needs of a client: type your code against it, and give it a
 * Quarry\Client, or in tests a mock ($this->createMock(Quarry\ClientInterface::class)).
 */
interface ClientInterface
{
    /**
     * Runs an analytic with typed params (POST /v1/query); see Client::query.
     *
     * @param array<string, mixed> $params
     * @throws Exception\QuarryException
     */
    public function query(
        string $source,
        array $params = [],
        bool $noCache = false,
        ?string $idempotencyKey = null,
        ?int $maxCredits = null,
    ): QueryResult;
}
