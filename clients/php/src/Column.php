<?php

declare(strict_types=1);

namespace Quarry;

/** A result column and its type as the gateway reports it (string, integer, decimal, date …). */
final class Column
{
    public const SCHEMA = 'QueryResponse.columns[]';

    public function __construct(
        public readonly string $name,
        public readonly string $type,
    ) {
    }
}
