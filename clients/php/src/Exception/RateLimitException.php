<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** 429 RATE_LIMIT_EXCEEDED: retried automatically after retryAfter seconds. */
class RateLimitException extends QuarryException
{
}
