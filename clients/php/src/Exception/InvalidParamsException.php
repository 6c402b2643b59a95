<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** 400 INVALID_PARAMS: details lists each param that is unknown, missing or wrong. */
class InvalidParamsException extends QuarryException
{
}
