<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** 422 RESULT_TOO_LARGE: the result is larger than the gateway answers; narrow the params. */
class ResultTooLargeException extends QuarryException
{
}
