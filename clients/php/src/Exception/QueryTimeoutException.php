<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** 504 QUERY_TIMEOUT: the analytic's own time limit passed on the gateway. */
class QueryTimeoutException extends QuarryException
{
}
