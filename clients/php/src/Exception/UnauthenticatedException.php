<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** 401 UNAUTHENTICATED: no, malformed, unknown, revoked or expired credential. */
class UnauthenticatedException extends QuarryException
{
}
