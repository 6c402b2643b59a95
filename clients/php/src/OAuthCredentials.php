<?php

declare(strict_types=1);

namespace Quarry;

/** An OAuth client of your account (POST /v1/oauth/clients shows the secret once). */
final class OAuthCredentials
{
    /**
     * @param string|list<string>|null $scope scopes to ask for; null for all of the client's
     */
    public function __construct(
        public readonly string $clientId,
        public readonly string $clientSecret,
        public readonly string|array|null $scope = null,
    ) {
    }
}
