<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** OAuth clients of your account, for services that call the gateway ($client->oauthClients). */
final class OAuthClients extends Resource
{
    /**
     * A new client and its secret (qcs_…), shown this once. Default scopes: all of yours. Not
     * repeated after a failure that may have created it.
     *
     * @param ?list<string> $scopes
     * @return array{client: Model\OAuthClient, client_secret: string}
     */
    public function create(string $name, ?array $scopes = null): array
    {
        $answer = $this->transport->send('POST', '/v1/oauth/clients', body: self::object(['name' => $name, 'scopes' => $scopes]), idempotent: false);
        return ['client' => Model\OAuthClient::fromArray($answer['client']), 'client_secret' => (string) $answer['client_secret']];
    }

    /**
     * Every OAuth client of the account, revoked ones included (never a secret).
     *
     * @return list<Model\OAuthClient>
     */
    public function list(): array
    {
        return array_map(static fn (array $c) => Model\OAuthClient::fromArray($c), $this->transport->send('GET', '/v1/oauth/clients')['clients']);
    }

    /** Revokes a client by its record id (ocl_…): its tokens stop working. */
    public function revoke(string $id): void
    {
        $this->transport->send('DELETE', '/v1/oauth/clients/' . self::segment($id));
    }
}
