<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** Your analytics as an owner: the methods of $client->analytics beside get() (owner scope). */
trait OwnerAnalytics
{
    /**
     * Your analytics at their current versions.
     *
     * @return list<Model\Analytic>
     */
    public function list(): array
    {
        return array_map(static fn (array $a) => Model\Analytic::fromArray($a), $this->transport->send('GET', '/v1/owner/analytics')['analytics']);
    }

    /**
     * Creates an analytic from its definition (as an owner writes it: name, connection, sql,
     * params …); ConflictException when the name is taken. The SQL is tried first unless $check is false.
     *
     * @param array<string, mixed> $definition
     */
    public function create(array $definition, bool $check = true): Model\Analytic
    {
        $answer = $this->transport->send('POST', '/v1/owner/analytics', ['check' => $check ? null : 'false'], $definition, idempotent: false);
        return Model\Analytic::fromArray($answer['analytic']);
    }

    /**
     * Creates the analytic, adds a version when its definition changed, or changes nothing.
     *
     * @param array<string, mixed> $definition
     * @return array{outcome: string, analytic: Model\Analytic} outcome: created, updated or unchanged
     */
    public function deploy(array $definition, bool $check = true): array
    {
        $answer = $this->transport->send('PUT', self::ownerPath($definition), ['check' => $check ? null : 'false'], $definition);
        return ['outcome' => (string) $answer['outcome'], 'analytic' => Model\Analytic::fromArray($answer['analytic'])];
    }

    /**
     * Runs every check of a deploy (the SQL included) and says what it would do: name, outcome,
     * definition and columns, as decoded JSON. Nothing is saved.
     *
     * @param array<string, mixed> $definition
     * @return array<string, mixed>
     */
    public function dryRun(array $definition): array
    {
        return $this->transport->send('POST', self::ownerPath($definition) . '/dry-run', body: $definition);
    }

    /**
     * Replaces the definition of one of your analytics with a whole new one: always a new
     * version. A repeat would add another: only a refused call is repeated.
     *
     * @param array<string, mixed> $definition
     */
    public function update(string $name, array $definition): Model\Analytic
    {
        $answer = $this->transport->send('PATCH', '/v1/owner/analytics/' . rawurlencode($name), body: $definition, idempotent: false);
        return Model\Analytic::fromArray($answer['analytic']);
    }

    /** One of your analytics, at its current version or at $version. */
    public function describe(string $name, ?int $version = null): Model\Analytic
    {
        $answer = $this->transport->send('GET', '/v1/owner/analytics/' . rawurlencode($name), ['version' => $version]);
        return Model\Analytic::fromArray($answer['analytic']);
    }

    /**
     * Every kept version (version, definition, price, deprecation, created_at…).
     *
     * @return list<Model\AnalyticVersion>
     */
    public function versions(string $name): array
    {
        $answer = $this->transport->send('GET', '/v1/owner/analytics/' . rawurlencode($name) . '/versions');
        return array_map(static fn (array $v) => Model\AnalyticVersion::fromArray($v), $answer['versions']);
    }

    /**
     * Deprecates a version callers pin (not the current one): its calls carry Deprecation and
     * Sunset headers and are refused from $sunset on (an ISO 8601 time, at most 366 days ahead).
     * Setting it again moves the sunset.
     */
    public function deprecate(string $name, int $version, string $sunset): Model\DeprecatedVersion
    {
        $answer = $this->transport->send('PUT', '/v1/owner/analytics/' . rawurlencode($name) . "/versions/{$version}/deprecation", body: ['sunset' => $sunset]);
        return Model\DeprecatedVersion::fromArray($answer['deprecated_version']);
    }

    /** Withdraws a version's deprecation. */
    public function undeprecate(string $name, int $version): void
    {
        $this->transport->send('DELETE', '/v1/owner/analytics/' . rawurlencode($name) . "/versions/{$version}/deprecation");
    }

    /** Deletes one of your analytics (its name becomes free). */
    public function delete(string $name): void
    {
        $this->transport->send('DELETE', '/v1/owner/analytics/' . rawurlencode($name));
    }

    /** Drops the cached answers of one of your analytics on every gateway instance. */
    public function purgeCache(string $name): void
    {
        $this->transport->send('DELETE', '/v1/owner/analytics/' . rawurlencode($name) . '/cache');
    }

    /** @param array<string, mixed> $definition */
    private static function ownerPath(array $definition): string
    {
        $name = $definition['name'] ?? null;
        if (!is_string($name) || $name === '') {
            throw new \InvalidArgumentException('An analytic definition needs a name.');
        }
        return '/v1/owner/analytics/' . rawurlencode($name);
    }
}
