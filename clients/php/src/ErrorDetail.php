<?php

declare(strict_types=1);

namespace Quarry;

/**
 * One item of an error's details: the param or field, what is wrong with it, and a number it is
 * about ($value; QUOTA_EXCEEDED: credits_needed, credits_left).
 */
final class ErrorDetail
{
    public const SCHEMA = 'Error.error.details[]';

    public function __construct(
        public readonly string $message,
        public readonly ?string $param = null,
        public readonly ?string $field = null,
        public readonly int|float|null $value = null,
    ) {
    }
}
