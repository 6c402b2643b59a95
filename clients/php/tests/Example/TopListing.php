<?php

declare(strict_types=1);

namespace Quarry\Tests\Example;

use Quarry\Client;

/**
 * Code a user of the client writes, and wants to unit-test without a gateway (MockBackendTest
 * does): find the most popular listing of a search and run it, paying at most its list price.
 */
final class TopListing
{
    public function __construct(private readonly Client $quarry)
    {
    }

    /**
     * @param array<string, mixed> $params
     * @return ?array{listing: string, owner: string, rows: int, credits: int}
     */
    public function run(string $search, string $category, array $params): ?array
    {
        $found = $this->quarry->marketplace->search(q: $search, category: $category, limit: 1);
        if ($found === []) {
            return null;
        }
        $listing = $found[0];
        $answer = $this->quarry->query($listing->name, $params, maxCredits: $listing->price);
        return ['listing' => $listing->name, 'owner' => $listing->owner->name, 'rows' => count($answer->results), 'credits' => $answer->meta->credits];
    }
}
