<?php

declare(strict_types=1);

namespace Quarry\Tests;

use PHPUnit\Framework\TestCase;
use Quarry\Client;
use Quarry\Model;

/** calls->listAll(): every page of the account's recent calls, fetched lazily, against php -S. */
final class CallsListAllTest extends TestCase
{
    /** @var resource|null */
    private $server = null;
    private string $url = '';
    private string $log = '';

    protected function tearDown(): void
    {
        if ($this->server !== null) {
            proc_terminate($this->server);
            proc_close($this->server);
        }
        if ($this->log !== '' && is_file($this->log)) {
            unlink($this->log);
        }
    }

    /** A client of a stand-in gateway holding $total calls. */
    private function gateway(int $total): Client
    {
        $socket = stream_socket_server('tcp://127.0.0.1:0');
        $name = (string) stream_socket_get_name($socket, false);
        $port = (int) substr($name, strrpos($name, ':') + 1);
        fclose($socket);
        $this->log = (string) tempnam(sys_get_temp_dir(), 'quarry-calls-');
        $this->server = proc_open(
            [PHP_BINARY, '-S', "127.0.0.1:{$port}", __DIR__ . '/fixtures/calls-router.php'],
            [['pipe', 'r'], ['file', '/dev/null', 'w'], ['file', '/dev/null', 'w']],
            $pipes,
            null,
            ['QUARRY_CALLS_LOG' => $this->log, 'QUARRY_CALLS_TOTAL' => (string) $total] + getenv(),
        );
        $this->url = "http://127.0.0.1:{$port}";
        for ($i = 0; $i < 100; $i++) {
            $probe = @fsockopen('127.0.0.1', $port);
            if ($probe !== false) {
                fclose($probe);
                return new Client($this->url, apiKey: 'qry_live_x');
            }
            usleep(50_000);
        }
        $this->fail('php -S did not start');
    }

    /** @return list<string> */
    private function requests(): array
    {
        return array_values(array_filter(explode("\n", (string) file_get_contents($this->log))));
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
