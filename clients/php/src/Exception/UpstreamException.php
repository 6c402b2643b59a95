<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** 502 UPSTREAM_ERROR: the warehouse rejected or failed the query. */
class UpstreamException extends QuarryException
{
}
