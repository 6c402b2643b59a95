<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** Listed analytics anyone may call ($client->marketplace). */
final class Marketplace extends Resource
{
    /**
     * Listings matching $q (title, description, name, tags) and $category, most popular first
     * ($sort 'newest': newest first), one page of $limit from $offset.
     *
     * @return list<Model\Listing>
     */
    public function search(
        ?string $q = null,
        ?string $category = null,
        ?string $sort = null,
        ?int $limit = null,
        ?int $offset = null,
    ): array {
        $query = ['q' => $q, 'category' => $category, 'sort' => $sort, 'limit' => $limit, 'offset' => $offset];
        return array_map(static fn (array $l) => Model\Listing::fromArray($l), $this->transport->send('GET', '/v1/marketplace/listings', $query)['items']);
    }

    /** One listing with its params, example request and curl line. */
    public function get(string $name): Model\ListingDetail
    {
        return Model\ListingDetail::fromArray($this->transport->send('GET', '/v1/marketplace/listings/' . self::segment($name)));
    }

    /**
     * A try-token for free previews of one listed analytic (or one of yours), valid $ttlSeconds
     * (1–300, default 300): make a Client with it as apiKey and query.
     */
    public function tryToken(string $source, ?int $ttlSeconds = null): Model\TryToken
    {
        $body = self::object(['source' => $source, 'ttl_seconds' => $ttlSeconds]);
        return Model\TryToken::fromArray($this->transport->send('POST', '/v1/marketplace/try-token', body: $body));
    }
}
