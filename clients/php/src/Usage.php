<?php

declare(strict_types=1);

namespace Quarry;

/** Your account's usage ($client->usage). */
final class Usage
{
    /** @internal */
    public function __construct(private readonly Transport $transport)
    {
    }

    /**
     * GET /v1/account/usage: period, plan, totals (credits used and left, amount due …), budget,
     * by_analytic and by_day. $period is a UTC month YYYY-MM (default: the current one).
     */
    public function get(?string $period = null): Model\Usage
    {
        return Model\Usage::fromArray($this->transport->send('GET', '/v1/account/usage', ['period' => $period]));
    }
}
