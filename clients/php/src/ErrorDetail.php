<?php

declare(strict_types=1);

namespace Quarry;

/** One item of an error's details: the param or field and what is wrong with it. */
final class ErrorDetail
{
    public function __construct(
        public readonly string $message,
        public readonly ?string $param = null,
        public readonly ?string $field = null,
    ) {
    }
}
