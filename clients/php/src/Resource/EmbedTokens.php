<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** Embed tokens for web pages ($client->embedTokens; the query scope): mint them on your server. */
final class EmbedTokens extends Resource
{
    /**
     * A token calling $analytics only ([['name' => …, 'fixed_params' => […]]]), from $origins
     * only (none: servers only), for $expiresIn seconds (default 3600, at most 86400), with an
     * optional rate limit of its own (['limit' => n, 'window_seconds' => s]).
     *
     * @param list<array{name: string, fixed_params?: array<string, mixed>}> $analytics
     * @param ?list<string> $origins
     * @param ?array{limit: int, window_seconds: int} $rateLimit
     */
    public function create(array $analytics, ?array $origins = null, ?int $expiresIn = null, ?array $rateLimit = null): Model\EmbedToken
    {
        $body = self::object([
            'analytics' => $analytics,
            'origins' => $origins,
            'expires_in' => $expiresIn,
            'rate_limit' => $rateLimit,
        ]);
        return Model\EmbedToken::fromArray($this->transport->send('POST', '/v1/embed-tokens', body: $body)['embed_token']);
    }
}
