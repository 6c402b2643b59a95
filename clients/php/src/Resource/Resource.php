<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Transport;

/** What every resource of the client shares: the transport, path segments and flags. */
abstract class Resource
{
    /** @internal Built by Quarry\Client; use its property. */
    public function __construct(protected readonly Transport $transport)
    {
    }

    protected static function segment(string $value): string
    {
        return rawurlencode($value);
    }

    /** 'false' when $value is false (the gateway's default is true), else null (left out). */
    protected static function flag(bool $value): ?string
    {
        return $value ? null : 'false';
    }

    /**
     * A JSON object body: an empty PHP array would encode as a JSON list.
     *
     * @param array<string, mixed> $fields
     */
    protected static function object(array $fields): array|\stdClass
    {
        $fields = array_filter($fields, static fn ($v) => $v !== null);
        return $fields === [] ? new \stdClass() : $fields;
    }
}
