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
     * @param ?int $total_rows pages only: rows in the whole result ($row_count is this page's)
     * @param ?int $offset pages only: the index of this page's first row
     * @param ?string $next pages only: the cursor of the next page, null on the last one
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
        public readonly ?int $total_rows = null,
        public readonly ?int $offset = null,
        public readonly ?string $next = null,
    ) {
    }
}
