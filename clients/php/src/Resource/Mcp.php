<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** The account's MCP settings ($client->mcp; needs the account scope). */
final class Mcp extends Resource
{
    /** The price limit of an MCP tool call without its own max_credits (null: none). */
    public function get(): Model\McpDefaults
    {
        return Model\McpDefaults::fromArray($this->transport->send('GET', '/v1/account/mcp')['mcp']);
    }

    /** Sets that limit in credits (at least 1); null removes it. REST calls are not affected. */
    public function set(?int $maxCredits): Model\McpDefaults
    {
        return Model\McpDefaults::fromArray($this->transport->send('PUT', '/v1/account/mcp', body: ['max_credits' => $maxCredits])['mcp']);
    }
}
