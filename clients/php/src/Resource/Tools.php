<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/**
 * The account's agent tools ($client->tools; needs the account scope): the analytics its agents
 * see and may call on /mcp, its own and those added here (docs/mcp.md).
 */
final class Tools extends Resource
{
    /**
     * Every tool of the account: its own live analytics and those it added that it may still call.
     *
     * @return list<Model\AgentTool>
     */
    public function list(): array
    {
        return array_map(static fn (array $t) => Model\AgentTool::fromArray($t), $this->transport->send('GET', '/v1/account/tools')['items']);
    }

    /**
     * Adds an analytic the account may call (public or shared with it); adding twice is adding
     * once. A NotFoundException (SOURCE_NOT_FOUND) for one it may not call.
     */
    public function add(string $name): Model\AgentTool
    {
        return Model\AgentTool::fromArray($this->transport->send('POST', '/v1/account/tools', body: ['source' => $name])['tool']);
    }

    /** Removes a tool the account added (NOT_FOUND when it was not added; its own stay tools). */
    public function remove(string $name): void
    {
        $this->transport->send('DELETE', '/v1/account/tools/' . self::segment($name));
    }
}
