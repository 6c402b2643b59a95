<?php

declare(strict_types=1);

namespace Quarry;

/** Your account's API keys ($client->keys; needs the keys scope). */
final class Keys
{
    /** @internal */
    public function __construct(private readonly Transport $transport)
    {
    }

    /**
     * A new key; its secret is shown this once. Default scopes: all of yours. Not repeated
     * after a failure that may have created it (only a rate-limited call is).
     *
     * @param ?list<string> $scopes
     */
    public function create(string $name, ?array $scopes = null, ?string $expiresAt = null): ApiKey
    {
        $body = array_filter(['name' => $name, 'scopes' => $scopes, 'expires_at' => $expiresAt], static fn ($v) => $v !== null);
        return ApiKey::fromArray($this->transport->send('POST', '/v1/keys', body: $body, idempotent: false)['key']);
    }

    /** @return list<ApiKey> every key of the account, revoked ones included, never a secret */
    public function list(): array
    {
        return array_map([ApiKey::class, 'fromArray'], $this->transport->send('GET', '/v1/keys')['keys']);
    }

    /** Revokes a key and returns it; every gateway instance refuses it within seconds. */
    public function revoke(string $id): ApiKey
    {
        return ApiKey::fromArray($this->transport->send('DELETE', '/v1/keys/' . rawurlencode($id))['key']);
    }
}
