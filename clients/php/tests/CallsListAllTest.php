<?php

declare(strict_types=1);

namespace Quarry\Tests;

use PHPUnit\Framework\TestCase;
use Quarry\Client;
use Quarry\Model;

/** calls->listAll(): every page of the account's recent calls, fetched lazily, against php -S. */
final class CallsListAllTest extends TestCase
{
    private ?StandInGateway $gateway = null;

    protected function tearDown(): void
    {
        $this->gateway?->stop();
    }

    /** A client of a stand-in gateway holding $total calls. */
    private function gateway(int $total): Client
    {
        $this->gateway = new StandInGateway(calls: $total);
        return $this->gateway->client;
    }

    /** @return list<string> */
    private function requests(): array
    {
        return $this->gateway?->requests() ?? [];
    }

    public function testFollowsNextCursorThroughEveryPageAndStopsWhenItIsNull(): void
    {
        $client = $this->gateway(5);
        $ids = [];
        foreach ($client->calls->listAll(analytic: 'sales', status: 'ok', pageSize: 2) as $call) {
            $this->assertInstanceOf(Model\Call::class, $call);
            $ids[] = $call->request_id;
        }
        $this->assertSame(['r0', 'r1', 'r2', 'r3', 'r4'], $ids);
        $this->assertSame([
            '/v1/account/calls?analytic=sales&status=ok&limit=2',
            '/v1/account/calls?analytic=sales&status=ok&limit=2&cursor=after-r1',
            '/v1/account/calls?analytic=sales&status=ok&limit=2&cursor=after-r3',
        ], $this->requests());
    }

    public function testFetchesLazilyOnlyThePagesTheLoopUsed(): void
    {
        $client = $this->gateway(250);
        $all = $client->calls->listAll();
        $seen = 0;
        foreach ($all as $call) {
            if ($seen === 0) {
                $this->assertSame(['/v1/account/calls?limit=100'], $this->requests());
            }
            if (++$seen === 150) {
                break;
            }
        }
        // The default page is the largest the gateway gives: 100.
        $this->assertSame(['/v1/account/calls?limit=100', '/v1/account/calls?limit=100&cursor=after-r99'], $this->requests());
    }

    public function testYieldsNothingWhenThereAreNoCallsAfterOneRequest(): void
    {
        $client = $this->gateway(0);
        $this->assertSame([], iterator_to_array($client->calls->listAll(analytic: 'none')));
        $this->assertCount(1, $this->requests());
    }
}
