<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** HS256 secrets your backend mints embed tokens with offline ($client->embedSecrets; the keys scope). */
final class EmbedSecrets extends Resource
{
    /** A new secret; its secret is shown this once and its id is the tokens' kid. */
    public function create(string $name): Model\IssuedEmbedSecret
    {
        $answer = $this->transport->send('POST', '/v1/embed-secrets', body: ['name' => $name], idempotent: false);
        return Model\IssuedEmbedSecret::fromArray($answer['embed_secret']);
    }

    /**
     * The secrets that still verify tokens (never a secret).
     *
     * @return list<Model\EmbedSecret>
     */
    public function list(): array
    {
        return array_map(static fn (array $s) => Model\EmbedSecret::fromArray($s), $this->transport->send('GET', '/v1/embed-secrets')['embed_secrets']);
    }

    /**
     * A new secret; the old one verifies $overlapSeconds more (default 86400).
     *
     * @return array{embed_secret: Model\IssuedEmbedSecret, previous: Model\EmbedSecret}
     */
    public function rotate(string $id, ?int $overlapSeconds = null): array
    {
        $answer = $this->transport->send('POST', '/v1/embed-secrets/' . self::segment($id) . '/rotate', body: self::object(['overlap_seconds' => $overlapSeconds]), idempotent: false);
        return [
            'embed_secret' => Model\IssuedEmbedSecret::fromArray($answer['embed_secret']),
            'previous' => Model\EmbedSecret::fromArray($answer['previous']),
        ];
    }

    /** Ends a secret: tokens it signed stop working within seconds. */
    public function revoke(string $id): Model\EmbedSecret
    {
        return Model\EmbedSecret::fromArray($this->transport->send('DELETE', '/v1/embed-secrets/' . self::segment($id))['embed_secret']);
    }
}
