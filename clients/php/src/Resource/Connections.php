<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** Your warehouse connections as an owner ($client->connections; owner scope). */
final class Connections extends Resource
{
    /**
     * Saves a connection; the gateway opens a session with it first unless $test is false. A
     * repeat could meet its own first attempt's name: only a refused call is repeated.
     *
     * @param array<string, mixed> $config
     */
    public function create(string $name, string $type, array $config, bool $test = true): Model\Connection
    {
        $answer = $this->transport->send('POST', '/v1/owner/connections', ['test' => self::flag($test)], [
            'name' => $name,
            'type' => $type,
            'config' => $config === [] ? new \stdClass() : $config,
        ], idempotent: false);
        return Model\Connection::fromArray($answer['connection']);
    }

    /**
     * Your connections (secrets are never returned).
     *
     * @return list<Model\Connection>
     */
    public function list(): array
    {
        return array_map(static fn (array $c) => Model\Connection::fromArray($c), $this->transport->send('GET', '/v1/owner/connections')['connections']);
    }

    /**
     * One connection and its circuit breaker.
     *
     * @return array{connection: Model\Connection, circuit: Model\Circuit}
     */
    public function get(string $id): array
    {
        $answer = $this->transport->send('GET', '/v1/owner/connections/' . self::segment($id));
        return ['connection' => Model\Connection::fromArray($answer['connection']), 'circuit' => Model\Circuit::fromArray($answer['circuit'])];
    }

    /**
     * Changes the given config fields (secrets too; null removes one); tested first unless $test is false.
     *
     * @param array<string, mixed> $config
     */
    public function update(string $id, array $config, bool $test = true): Model\Connection
    {
        $answer = $this->transport->send('PATCH', '/v1/owner/connections/' . self::segment($id), ['test' => self::flag($test)], [
            'config' => $config === [] ? new \stdClass() : $config,
        ]);
        return Model\Connection::fromArray($answer['connection']);
    }

    /**
     * Deletes a connection; refused (ConflictException) while analytics use it unless $force,
     * which also takes their listings off the marketplace.
     */
    public function delete(string $id, bool $force = false): Model\ConnectionRemoval
    {
        return Model\ConnectionRemoval::fromArray(
            $this->transport->send('DELETE', '/v1/owner/connections/' . self::segment($id), ['force' => $force ? 'true' : null]),
        );
    }

    /**
     * Opens a session to the warehouse: ['ok' => true, 'latency_ms' => …]. Not repeated: a
     * failure is reported, not waited out.
     *
     * @return array{ok: bool, latency_ms: float}
     */
    public function test(string $id): array
    {
        return $this->transport->send('POST', '/v1/owner/connections/' . self::segment($id) . '/test', idempotent: false);
    }
}
