<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** 404 SOURCE_NOT_FOUND (an unknown analytic) or NOT_FOUND (another resource). */
class NotFoundException extends QuarryException
{
}
