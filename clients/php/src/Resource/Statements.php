<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** Your earnings as an owner ($client->statements). */
final class Statements extends Resource
{
    /** The statement of a UTC month YYYY-MM (default: the current one). */
    public function get(?string $period = null): Model\OwnerStatement
    {
        return Model\OwnerStatement::fromArray($this->transport->send('GET', '/v1/owner/statements', ['period' => $period]));
    }
}
