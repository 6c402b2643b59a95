<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** 429 QUOTA_EXCEEDED: the plan's monthly credits are used up; never retried. */
class QuotaExceededException extends QuarryException
{
}
