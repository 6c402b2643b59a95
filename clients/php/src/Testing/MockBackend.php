<?php

declare(strict_types=1);

namespace Quarry\Testing;

use Quarry\Exception\NetworkException;
use Quarry\Exception\TimeoutException;
use Quarry\Http\HttpBackend;
use Quarry\Http\HttpRequest;
use Quarry\Http\HttpResponse;

/**
 * An HttpBackend for tests: no network. It answers each request with the next answer of its
 * queue (or, once the queue is empty, with its fallback) and records every request, so a test
 * can check what the code under test sent. The client handles its answers as a server's: a
 * status outside 2xx becomes the same typed exception (RateLimitException with retryAfter …),
 * retried under the client's RetryPolicy; a queued NetworkException or TimeoutException is a
 * request that got no answer.
 *
 *     use Quarry\Testing\MockBackend;
 *
 *     $http = new MockBackend([
 *         MockBackend::json(['items' => [], 'total' => 0]),
 *         MockBackend::error(429, 'RATE_LIMIT_EXCEEDED', 'Slow down.', 'req_1', retryAfter: 2),
 *     ]);
 *     $client = new Quarry\Client('https://quarry.test', apiKey: 'qry_test', http: $http,
 *         retry: new Quarry\RetryPolicy(retries: 0));
 *     // … run the code under test, then:
 *     $http->lastRequest()->query();   // ['q' => 'sales']
 *
 * Not a stub of the client: everything between your code and the HTTP exchange (URLs, query
 * strings, JSON bodies, headers, models, exceptions, retries, OAuth tokens) is the real client's.
 */
final class MockBackend implements HttpBackend, \Countable
{
    /** @var list<HttpResponse|\Throwable|\Closure(HttpRequest): HttpResponse> */
    private array $queue = [];
    /** @var list<HttpRequest> */
    private array $requests = [];
    /** @var ?\Closure(HttpRequest): HttpResponse */
    private readonly ?\Closure $fallback;

    /**
     * @param iterable<HttpResponse|\Throwable|callable(HttpRequest): HttpResponse> $answers one
     *     per request, in order: a response, an exception to throw (NetworkException or
     *     TimeoutException: no answer), or a callable that makes the response from the request
     * @param ?callable(HttpRequest): HttpResponse $fallback answers every request once the queue
     *     is empty; without one, such a request throws \UnderflowException (not retried)
     */
    public function __construct(iterable $answers = [], ?callable $fallback = null)
    {
        foreach ($answers as $answer) {
            $this->append($answer);
        }
        $this->fallback = $fallback === null ? null : \Closure::fromCallable($fallback);
    }

    /**
     * Queues more answers after those already queued.
     *
     * @param HttpResponse|\Throwable|callable(HttpRequest): HttpResponse ...$answers
     */
    public function append(HttpResponse|\Throwable|callable ...$answers): self
    {
        foreach ($answers as $answer) {
            $this->queue[] = $answer instanceof HttpResponse || $answer instanceof \Throwable ? $answer : \Closure::fromCallable($answer);
        }
        return $this;
    }

    public function send(HttpRequest $request): HttpResponse
    {
        $this->requests[] = $request;
        $answer = array_shift($this->queue) ?? $this->fallback ?? throw new \UnderflowException(
            "Quarry\\Testing\\MockBackend: no answer queued for request " . count($this->requests)
            . " ({$request->method} {$request->url}); append() one, or give the MockBackend a fallback.",
        );
        if ($answer instanceof \Throwable) {
            throw $answer;
        }
        if ($answer instanceof \Closure) {
            $answer = $answer($request);
            if (!$answer instanceof HttpResponse) {
                throw new \UnexpectedValueException('Quarry\\Testing\\MockBackend: a callable answer must return a Quarry\\Http\\HttpResponse, got ' . get_debug_type($answer) . '.');
            }
        }
        return $answer;
    }

    /**
     * Every request received, oldest first (retries and OAuth token requests included).
     *
     * @return list<HttpRequest>
     */
    public function requests(): array
    {
        return $this->requests;
    }

    /**
     * The latest request received.
     *
     * @throws \UnderflowException none yet
     */
    public function lastRequest(): HttpRequest
    {
        return $this->requests[count($this->requests) - 1]
            ?? throw new \UnderflowException('Quarry\\Testing\\MockBackend has received no request.');
    }

    /** How many requests were received. */
    public function count(): int
    {
        return count($this->requests);
    }

    /** How many queued answers are still unused. */
    public function remaining(): int
    {
        return count($this->queue);
    }

    /**
     * A JSON answer: $body encoded (a model's raw array, or any array), Content-Type set. A 204
     * has no body.
     *
     * @param array<string, string> $headers
     */
    public static function json(mixed $body, int $status = 200, array $headers = []): HttpResponse
    {
        $text = $status === 204 ? ''
            : json_encode($body, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION);
        return new HttpResponse($status, array_merge(['content-type' => 'application/json'], $headers), $text);
    }

    /**
     * The gateway's error answer: its envelope {"error":{"code","message","request_id",
     * "retry_after","details"}}, the X-Request-Id header and, with $retryAfter, a Retry-After
     * header (whole seconds), as the gateway sends them.
     *
     * @param string $code the envelope's code: RATE_LIMIT_EXCEEDED, INVALID_PARAMS, NOT_FOUND, …
     * @param ?float $retryAfter seconds (RATE_LIMIT_EXCEEDED, QUOTA_EXCEEDED, SOURCE_UNAVAILABLE)
     * @param list<array<string, mixed>> $details e.g. [['param' => 'year', 'message' => 'must be an integer']]
     */
    public static function error(
        int $status,
        string $code,
        string $message,
        ?string $requestId = null,
        ?float $retryAfter = null,
        array $details = [],
    ): HttpResponse {
        $error = ['code' => $code, 'message' => $message];
        $headers = ['content-type' => 'application/json'];
        if ($requestId !== null) {
            $error['request_id'] = $requestId;
            $headers['x-request-id'] = $requestId;
        }
        if ($retryAfter !== null) {
            $error['retry_after'] = $retryAfter;
            $headers['retry-after'] = (string) (int) ceil($retryAfter);
        }
        if ($details !== []) {
            $error['details'] = $details;
        }
        return new HttpResponse($status, $headers, json_encode(['error' => $error], JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION));
    }

    /** A request that got no answer (refused, DNS, reset): queue it to test that path. */
    public static function networkError(string $message = 'Connection refused'): NetworkException
    {
        return new NetworkException('NETWORK_ERROR', 0, "No answer from the mock server: {$message}");
    }

    /** A request whose answer did not come in time: queue it to test that path. */
    public static function timeout(): TimeoutException
    {
        return new TimeoutException('TIMEOUT', 0, 'The mock server did not answer in time.');
    }
}
