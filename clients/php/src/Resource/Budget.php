<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** Pay as you Go: the most the account may spend in a period, in USD ($client->budget). */
final class Budget extends Resource
{
    /** The budget, what is spent and left this period, and the operator's cap. */
    public function get(): Model\Budget
    {
        return Model\Budget::fromArray($this->transport->send('GET', '/v1/account/budget'));
    }

    /** Sets the budget in USD (whole cents; at most the operator's cap). */
    public function set(float $budgetUsd): Model\Budget
    {
        return Model\Budget::fromArray($this->transport->send('PUT', '/v1/account/budget', body: ['budget_usd' => $budgetUsd]));
    }
}
