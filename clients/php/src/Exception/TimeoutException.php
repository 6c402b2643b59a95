<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** The client's own overall timeout passed before the call (with its retries) finished. */
class TimeoutException extends QuarryException
{
}
