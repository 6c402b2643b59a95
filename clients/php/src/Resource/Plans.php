<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** The plans on offer ($client->plans). */
final class Plans extends Resource
{
    /**
     * Every plan: credits included, monthly price, what a credit costs.
     *
     * @return list<Model\Plan>
     */
    public function list(): array
    {
        return array_map(static fn (array $p) => Model\Plan::fromArray($p), $this->transport->send('GET', '/v1/plans')['plans']);
    }
}
