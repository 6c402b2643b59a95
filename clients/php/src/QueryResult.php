<?php

declare(strict_types=1);

namespace Quarry;

/**
 * A query's answer. Row values keep their JSON types: a 64-bit integer or a wide decimal that
 * the gateway sends as a string stays that exact string.
 */
final class QueryResult
{
    public const SCHEMA = 'QueryResponse';

    /**
     * @param list<array<string, mixed>> $results the rows
     * @param mixed $insights the owner-defined shape (single row, keyed, series, totals); null when none
     * @param list<Column> $columns
     */
    public function __construct(
        public readonly string $source,
        public readonly array $results,
        public readonly mixed $insights,
        public readonly array $columns,
        public readonly QueryMeta $meta,
    ) {
    }

    /**
     * Builds a result from the gateway's decoded JSON answer.
     *
     * @param array<string, mixed> $body
     */
    public static function fromArray(array $body): self
    {
        $meta = $body['meta'] ?? [];
        return new self(
            (string) ($body['source'] ?? ''),
            $body['results'] ?? [],
            $body['insights'] ?? null,
            array_map(static fn (array $c): Column => new Column($c['name'], $c['type']), $body['columns'] ?? []),
            new QueryMeta(
                (string) ($meta['request_id'] ?? ''),
                (bool) ($meta['cached'] ?? false),
                (float) ($meta['duration_ms'] ?? 0),
                (int) ($meta['row_count'] ?? 0),
                (bool) ($meta['truncated'] ?? false),
                (int) ($meta['credits'] ?? 0),
                isset($meta['version']) ? (int) $meta['version'] : null,
                isset($meta['next_price']) ? (int) $meta['next_price'] : null,
                isset($meta['next_price_at']) ? (string) $meta['next_price_at'] : null,
                isset($meta['preview']) ? (bool) $meta['preview'] : null,
                isset($meta['total_rows']) ? (int) $meta['total_rows'] : null,
                isset($meta['offset']) ? (int) $meta['offset'] : null,
                isset($meta['next']) ? (string) $meta['next'] : null,
            ),
        );
    }
}
