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

    /**
     * Every listing matching $q and $category, in the order of search(): a Generator that
     * fetches one page of $pageSize (1–100, default 100) at a time, as the loop asks for more.
     *
     * @return \Generator<int, Model\Listing, mixed, void>
     */
    public function searchAll(
        ?string $q = null,
        ?string $category = null,
        ?string $sort = null,
        int $pageSize = 100,
    ): \Generator {
        $offset = 0;
        while (true) {
            $query = ['q' => $q, 'category' => $category, 'sort' => $sort, 'limit' => $pageSize, 'offset' => $offset === 0 ? null : $offset];
            $page = $this->transport->send('GET', '/v1/marketplace/listings', $query);
            foreach ($page['items'] as $item) {
                yield Model\Listing::fromArray($item);
            }
            $offset += count($page['items']);
            // A short or empty page is the last; total spares the empty page after a full one.
            if (count($page['items']) < $pageSize || $offset >= $page['total']) {
                return;
            }
        }
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
