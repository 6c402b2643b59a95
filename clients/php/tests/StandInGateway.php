<?php

declare(strict_types=1);

namespace Quarry\Tests;

use Quarry\Client;

/** tests/fixtures/resource-router.php under php -S, and the requests it was sent. */
final class StandInGateway
{
    /** @var resource */
    private $server;
    private string $log;
    public readonly Client $client;

    public function __construct(int $calls = 0)
    {
        $socket = stream_socket_server('tcp://127.0.0.1:0');
        $name = (string) stream_socket_get_name($socket, false);
        $port = (int) substr($name, strrpos($name, ':') + 1);
        fclose($socket);
        $this->log = (string) tempnam(sys_get_temp_dir(), 'quarry-router-');
        $server = proc_open(
            [PHP_BINARY, '-S', "127.0.0.1:{$port}", __DIR__ . '/fixtures/resource-router.php'],
            [['pipe', 'r'], ['file', '/dev/null', 'w'], ['file', '/dev/null', 'w']],
            $pipes,
            null,
            ['QUARRY_ROUTER_LOG' => $this->log, 'QUARRY_CALLS_TOTAL' => (string) $calls] + getenv(),
        );
        if ($server === false) {
            throw new \RuntimeException('php -S did not start');
        }
        $this->server = $server;
        for ($i = 0; $i < 100; $i++) {
            $probe = @fsockopen('127.0.0.1', $port);
            if ($probe !== false) {
                fclose($probe);
                $this->client = new Client("http://127.0.0.1:{$port}", apiKey: 'qry_live_x');
                return;
            }
            usleep(50_000);
        }
        $this->stop();
        throw new \RuntimeException('php -S did not start');
    }

    /** @return list<string> Each request's path and query string, in order. */
    public function requests(): array
    {
        return array_values(array_filter(explode("\n", (string) file_get_contents($this->log))));
    }

    public function stop(): void
    {
        proc_terminate($this->server);
        proc_close($this->server);
        if (is_file($this->log)) {
            unlink($this->log);
        }
    }
}
