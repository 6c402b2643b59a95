<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** No response: connection refused or reset, body cut off. */
class NetworkException extends QuarryException
{
}
