<?php

declare(strict_types=1);

namespace Quarry;

/** What the gateway says about one served call. */
final class QueryMeta
{
    public const SCHEMA = 'QueryResponse.meta';

    /**
     * @param bool $cached served from the gateway's result cache
     * @param bool $truncated rows past the analytic's max_rows were cut
     * @param int $credits credits the call spent
     * @param ?int $version the analytic version that answered
     * @param ?int $next_price while the owner has a price rise scheduled: what a call will cost from $next_price_at
     * @param ?bool $preview a marketplace preview (a try-token call): free, at most the gateway's preview rows
     */
    public function __construct(
        public readonly string $request_id,
        public readonly bool $cached,
        public readonly float $duration_ms,
        public readonly int $row_count,
        public readonly bool $truncated,
        public readonly int $credits,
        public readonly ?int $version = null,
        public readonly ?int $next_price = null,
        public readonly ?string $next_price_at = null,
        public readonly ?bool $preview = null,
    ) {
    }
}
