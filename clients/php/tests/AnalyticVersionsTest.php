<?php

declare(strict_types=1);

namespace Quarry\Tests;

use PHPUnit\Framework\TestCase;
use Quarry\Model;

/** analytics->versions(): the generated AnalyticVersion models, against php -S. */
final class AnalyticVersionsTest extends TestCase
{
    public function testVersionsAreAnalyticVersionModels(): void
    {
        $gateway = new StandInGateway();
        try {
            $versions = $gateway->client->analytics->versions('sales/by region');
            $this->assertSame(['/v1/owner/analytics/sales%2Fby%20region/versions'], $gateway->requests());
        } finally {
            $gateway->stop();
        }
        $this->assertCount(2, $versions);
        $this->assertContainsOnlyInstancesOf(Model\AnalyticVersion::class, $versions);
        [$first, $second] = $versions;
        $this->assertSame([1, 1, '2026-10-01T00:00:00.000Z'], [$first->version, $first->price, $first->created_at]);
        $this->assertInstanceOf(Model\VersionDeprecation::class, $first->deprecation);
        $this->assertSame('2027-01-01T00:00:00.000Z', $first->deprecation->sunset);
        $this->assertSame([2, 2, null], [$second->version, $second->price, $second->deprecation]);
        $this->assertSame('sales/by region', $second->definition['name']);
        $this->assertSame(2, $second->raw['version']);
    }
}
