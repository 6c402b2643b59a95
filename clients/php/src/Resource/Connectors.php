<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** The warehouse types this gateway connects to ($client->connectors). */
final class Connectors extends Resource
{
    /** Each connector type with its config schema and secret fields. */
    public function list(): Model\ConnectorTypes
    {
        return Model\ConnectorTypes::fromArray($this->transport->send('GET', '/v1/connectors'));
    }
}
