<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** 409 PRICE_ABOVE_LIMIT: the call would cost more than its $maxCredits; nothing run or charged. */
class PriceAboveLimitException extends QuarryException
{
}
