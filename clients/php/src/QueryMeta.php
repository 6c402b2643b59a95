<?php

declare(strict_types=1);

namespace Quarry;

/** What the gateway says about one served call. */
final class QueryMeta
{
    /**
     * @param bool $cached served from the gateway's result cache
     * @param bool $truncated rows past the analytic's max_rows were cut
     * @param int $credits credits the call spent
     * @param ?int $version the analytic version that answered
     */
    public function __construct(
        public readonly string $request_id,
        public readonly bool $cached,
        public readonly float $duration_ms,
        public readonly int $row_count,
        public readonly bool $truncated,
        public readonly int $credits,
        public readonly ?int $version = null,
    ) {
    }
}
