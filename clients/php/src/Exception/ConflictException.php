<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** 409 CONFLICT: a duplicate name, or an Idempotency-Key still running. */
class ConflictException extends QuarryException
{
}
