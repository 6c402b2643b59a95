<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** Your listings on the marketplace as an owner ($client->listings). */
final class Listings extends Resource
{
    /**
     * Lists one of your public analytics on the marketplace (or updates its listing); null
     * fields keep their current (or default) value.
     *
     * @param ?list<string> $tags
     * @param ?array<string, mixed> $example_params
     */
    public function publish(
        string $name,
        ?string $title = null,
        ?string $description = null,
        ?string $category = null,
        ?array $tags = null,
        ?array $example_params = null,
        ?bool $previews = null,
    ): Model\OwnerListing {
        $body = self::object([
            'title' => $title,
            'description' => $description,
            'category' => $category,
            'tags' => $tags,
            'example_params' => $example_params === [] ? new \stdClass() : $example_params,
            'previews' => $previews,
        ]);
        return Model\OwnerListing::fromArray($this->transport->send('PUT', self::path($name), body: $body)['listing']);
    }

    /** Your listing of one analytic, published or not. */
    public function get(string $name): Model\OwnerListing
    {
        return Model\OwnerListing::fromArray($this->transport->send('GET', self::path($name))['listing']);
    }

    /** Takes the listing off the marketplace (the analytic keeps answering its callers). */
    public function unpublish(string $name): Model\OwnerListing
    {
        return Model\OwnerListing::fromArray($this->transport->send('DELETE', self::path($name))['listing']);
    }

    private static function path(string $name): string
    {
        return '/v1/owner/analytics/' . self::segment($name) . '/listing';
    }
}
