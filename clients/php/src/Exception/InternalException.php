<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** 500 INTERNAL: a bug in the gateway. */
class InternalException extends QuarryException
{
}
