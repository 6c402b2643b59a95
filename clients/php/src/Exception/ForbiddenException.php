<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** 403 FORBIDDEN: the credential's scopes or the analytic's visibility forbid the call. */
class ForbiddenException extends QuarryException
{
}
