<?php

declare(strict_types=1);

namespace Quarry\Tests;

use PHPUnit\Framework\TestCase;
use Quarry\Client;
use Quarry\ClientInterface;
use Quarry\ErrorFactory;
use Quarry\Exception;
use Quarry\Http\CurlBackend;
use Quarry\Http\HttpRequest;
use Quarry\Http\HttpResponse;
use Quarry\Http\StreamsBackend;
use Quarry\QueryResult;
use Quarry\RetryPolicy;
use Quarry\Testing\MockBackend;
use Quarry\Transport;

/**
 * The HTTP backends (cURL when loaded, else PHP's http stream wrapper, a clear error when
 * neither works) against a real local server, what an exception says, mocking the client, and a
 * MockBackend's answer throwing what the same answer from a server throws.
 */
final class HttpBackendTest extends TestCase
{
    /** @var resource|null */
    private static $server = null;
    private static string $url = '';

    public static function setUpBeforeClass(): void
    {
        $socket = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr((string) stream_socket_get_name($socket, false), strrpos((string) stream_socket_get_name($socket, false), ':') + 1);
        fclose($socket);
        self::$server = proc_open(
            [PHP_BINARY, '-S', "127.0.0.1:{$port}", __DIR__ . '/fixtures/router.php'],
            [['pipe', 'r'], ['file', '/dev/null', 'w'], ['file', '/dev/null', 'w']],
            $pipes,
        );
        self::$url = "http://127.0.0.1:{$port}";
        for ($i = 0; $i < 100; $i++) {
            $probe = @fsockopen('127.0.0.1', $port);
            if ($probe !== false) {
                fclose($probe);
                return;
            }
            usleep(50_000);
        }
        self::fail('php -S did not start');
    }

    public static function tearDownAfterClass(): void
    {
        if (self::$server !== null) {
            proc_terminate(self::$server);
            proc_close(self::$server);
        }
    }

    /** @return list<array{string}> */
    public static function backends(): array
    {
        return [['curl'], ['streams']];
    }

    /** @dataProvider backends */
    public function testEachBackendSendsAQueryAndMapsErrors(string $backend): void
    {
        $this->assertTrue(extension_loaded('curl'), 'the cURL extension is needed for this test (apt-get install php-curl)');
        $client = new Client(self::$url . '/ok', apiKey: 'qry_live_x', http: $backend);
        $row = $client->query('sales', ['year' => 2024])->results[0];
        $this->assertSame(['POST', 'Bearer qry_live_x', ['year' => 2024]], [$row['method'], $row['auth'], $row['params']]);
        $this->assertStringStartsWith('qc-', $row['idem']);
        $missing = new Client(self::$url . '/missing', apiKey: 'qry_live_x', http: $backend);
        try {
            $missing->query('x');
            $this->fail('expected a NotFoundException');
        } catch (Exception\NotFoundException $e) {
            $this->assertSame([404, 'req_404'], [$e->status, $e->requestId]);
        }
        $proxied = new Client(self::$url . '/proxy-502', apiKey: 'qry_live_x', retry: new RetryPolicy(retries: 0), http: $backend);
        try {
            $proxied->query('sales');
            $this->fail('expected an UpstreamException');
        } catch (Exception\UpstreamException $e) {
            $this->assertSame(502, $e->status);
        }
        try {
            Client::signUp(self::$url . '/missing', 'a@example.com', 'A', http: $backend);
            $this->fail('expected a NotFoundException');
        } catch (Exception\NotFoundException $e) {
            $this->assertSame([404, 'req_404'], [$e->status, $e->requestId]);
        }
    }

    /** @dataProvider backends */
    public function testTheBackendClassesCarryTheClientAndSayWhenNoAnswerCame(string $backend): void
    {
        $this->assertTrue(extension_loaded('curl'), 'the cURL extension is needed for this test (apt-get install php-curl)');
        $http = $backend === 'curl' ? new CurlBackend() : new StreamsBackend();
        $client = new Client(self::$url . '/ok', apiKey: 'qry_live_x', http: $http);
        $this->assertSame('Bearer qry_live_x', $client->query('sales')->results[0]['auth']);
        $answer = $http->send(new HttpRequest('GET', self::$url . '/missing/v1/x', ['Accept' => 'application/json'], null, 5.0));
        $this->assertSame([404, 'req_router', 'SOURCE_NOT_FOUND'], [$answer->status, $answer->header('X-Request-Id'), json_decode($answer->body, true)['error']['code']]);
        try {
            $http->send(new HttpRequest('GET', 'http://127.0.0.1:1/v1/x', [], null, 2.0));
            $this->fail('expected a NetworkException');
        } catch (Exception\NetworkException $e) {
            $this->assertStringContainsString('No answer from http://127.0.0.1:1 (GET)', $e->getMessage());
        }
    }

    public function testAQueuedAnswerThrowsWhatTheSameAnswerFromAServerThrows(): void
    {
        $shape = static function (callable $call): array {
            try {
                $call();
            } catch (Exception\QuarryException $e) {
                return [get_class($e), $e->errorCode, $e->status, $e->requestId, $e->retryAfter, $e->getMessage()];
            }
            return [];
        };
        $noRetry = new RetryPolicy(retries: 0);
        $fromServer = $shape(static fn () => (new Client(self::$url . '/missing', apiKey: 'k'))->query('x'));
        $mock = new MockBackend([MockBackend::error(404, 'SOURCE_NOT_FOUND', 'No analytic "x".', 'req_404')]);
        $fromMock = $shape(static fn () => (new Client('https://quarry.test', apiKey: 'k', http: $mock))->query('x'));
        $this->assertSame(Exception\NotFoundException::class, $fromServer[0]);
        $this->assertSame($fromServer, $fromMock);

        $page = '<html><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>';
        $fromProxy = $shape(static fn () => (new Client(self::$url . '/proxy-502', apiKey: 'k', retry: $noRetry))->query('x'));
        $mock = new MockBackend([new HttpResponse(502, ['Content-Type' => 'text/html', 'X-Request-Id' => 'req_router'], $page)]);
        $fromMock = $shape(static fn () => (new Client('https://quarry.test', apiKey: 'k', retry: $noRetry, http: $mock))->query('x'));
        $this->assertSame(Exception\UpstreamException::class, $fromProxy[0]);
        $this->assertSame($fromProxy, $fromMock);
    }

    public function testSignUpRefusesAnUnknownBackend(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Client::signUp('http://127.0.0.1:1', 'a@example.com', 'A', http: 'sockets');
    }

    public function testAutoPicksCurlWhenLoadedElseStreamsElseAClearError(): void
    {
        $this->assertSame('curl', Transport::chooseBackend('auto', curlLoaded: true, urlFopen: true));
        $this->assertSame('streams', Transport::chooseBackend('auto', curlLoaded: false, urlFopen: true));
        $this->assertSame('curl', Transport::chooseBackend('auto', curlLoaded: true, urlFopen: false));
        try {
            Transport::chooseBackend('auto', curlLoaded: false, urlFopen: false);
            $this->fail('expected a LogicException');
        } catch (\LogicException $e) {
            $this->assertStringContainsString('allow_url_fopen', $e->getMessage());
            $this->assertStringContainsString('curl', $e->getMessage());
        }
        $this->expectException(\LogicException::class);
        Transport::chooseBackend('streams', curlLoaded: true, urlFopen: false);
    }

    public function testStreamsWithoutAllowUrlFopenSayWhy(): void
    {
        $script = 'require ' . var_export(__DIR__ . '/bootstrap.php', true) . ';'
            . 'try { new Quarry\Client("http://127.0.0.1:1", apiKey: "k", http: "streams"); echo "built"; }'
            . ' catch (\LogicException $e) { echo $e->getMessage(); }';
        $out = (string) shell_exec(escapeshellarg(PHP_BINARY) . ' -n -d allow_url_fopen=0 -r ' . escapeshellarg($script) . ' 2>&1');
        $this->assertStringContainsString('allow_url_fopen', $out);
    }

    public function testTheMessageNamesTheCodeAndTheRequestId(): void
    {
        $e = ErrorFactory::fromResponse(429, [], '{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"slow down","request_id":"req_42"}}');
        $this->assertStringContainsString('RATE_LIMIT_EXCEEDED', $e->getMessage());
        $this->assertStringContainsString('req_42', $e->getMessage());
        $this->assertSame('slow down', $e->reason);
        $this->assertSame(Exception\RateLimitException::class . ': RATE_LIMIT_EXCEEDED: slow down (request req_42)', (string) $e);
    }

    public function testProxyPagesMapToTheUpstreamAndUnavailableFamilies(): void
    {
        $page = '<html><body><h1>Bad Gateway</h1></body></html>';
        $this->assertInstanceOf(Exception\UpstreamException::class, ErrorFactory::fromResponse(502, [], $page));
        $this->assertInstanceOf(Exception\SourceUnavailableException::class, ErrorFactory::fromResponse(503, [], $page));
        $this->assertInstanceOf(Exception\UpstreamException::class, ErrorFactory::fromResponse(504, [], $page));
        $this->assertSame(Exception\QuarryException::class, get_class(ErrorFactory::fromResponse(500, [], $page)));
    }

    public function testTheClientCanBeMockedThroughItsInterface(): void
    {
        $this->assertContains(ClientInterface::class, class_implements(Client::class));
        $answer = QueryResult::fromArray(['source' => 's', 'results' => [['n' => 1]], 'columns' => [], 'meta' => ['row_count' => 1]]);
        $mock = $this->createMock(ClientInterface::class);
        $mock->expects($this->once())->method('query')->with('s', ['year' => 2024])->willReturn($answer);
        $this->assertSame(1, $mock->query('s', ['year' => 2024])->results[0]['n']);
    }
}
