<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** 400 INVALID_REQUEST (and 405/413/415): the request itself is malformed. */
class InvalidRequestException extends QuarryException
{
}
