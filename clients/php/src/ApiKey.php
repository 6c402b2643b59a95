<?php

declare(strict_types=1);

namespace Quarry;

/** An API key. secret is set only on the answer to Keys::create(), shown that once. */
final class ApiKey
{
    public const SCHEMA = ['ApiKey', 'IssuedApiKey'];

    /** @param list<string> $scopes */
    public function __construct(
        public readonly string $id,
        public readonly string $name,
        public readonly string $prefix,
        public readonly array $scopes,
        public readonly string $created_at,
        public readonly ?string $expires_at = null,
        public readonly ?string $revoked_at = null,
        public readonly ?string $last_used_at = null,
        public readonly ?string $secret = null,
    ) {
    }

    /**
     * Builds a key from the gateway's decoded JSON.
     *
     * @param array<string, mixed> $key
     */
    public static function fromArray(array $key): self
    {
        return new self(
            $key['id'],
            $key['name'],
            (string) ($key['prefix'] ?? ''),
            $key['scopes'] ?? [],
            (string) ($key['created_at'] ?? ''),
            $key['expires_at'] ?? null,
            $key['revoked_at'] ?? null,
            $key['last_used_at'] ?? null,
            $key['secret'] ?? null,
        );
    }
}
