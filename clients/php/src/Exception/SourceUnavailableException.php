<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** 503 SOURCE_UNAVAILABLE: the warehouse is unreachable or busy. */
class SourceUnavailableException extends QuarryException
{
}
