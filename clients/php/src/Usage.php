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
     * GET /v1/account/usage: period, plan, totals (calls, credits, remaining_calls …),
     * by_analytic and by_day, as decoded JSON. $period is a UTC month YYYY-MM (default: the current one).
     *
     * @return array<string, mixed>
     */
    public function get(?string $period = null): array
    {
        return $this->transport->send('GET', '/v1/account/usage', ['period' => $period]);
    }
}
