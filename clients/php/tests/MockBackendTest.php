<?php

declare(strict_types=1);

namespace Quarry\Tests;

use PHPUnit\Framework\TestCase;
use Quarry\Client;
use Quarry\Exception;
use Quarry\Http\HttpBackend;
use Quarry\Http\HttpRequest;
use Quarry\Http\HttpResponse;
use Quarry\Model;
use Quarry\OAuthCredentials;
use Quarry\RetryPolicy;
use Quarry\Testing\MockBackend;
use Quarry\Tests\Example\TopListing;

/**
 * Quarry\Testing\MockBackend: code that uses any part of the client, tested without a network.
 * The client runs for real on top of it (URLs, bodies, headers, models, exceptions, retries,
 * OAuth); only the HTTP exchange is answered from the test.
 */
final class MockBackendTest extends TestCase
{
    private const URL = 'https://quarry.test';

    /** A listing as GET /v1/marketplace/listings answers it. */
    private const LISTING = [
        'name' => 'sales-by-region',
        'title' => 'Sales by region',
        'description' => 'Revenue per region and year.',
        'category' => 'sales',
        'tags' => ['revenue', 'regions'],
        'price' => 3,
        'calls_30d' => 120,
        'callers_30d' => 7,
        'owner' => ['name' => 'Acme Data'],
        'previews' => true,
        'published_at' => '2026-11-01T09:00:00.000Z',
    ];

    private static function client(MockBackend $http, RetryPolicy $retry = new RetryPolicy(retries: 0)): Client
    {
        return new Client(self::URL, apiKey: 'qry_live_test', http: $http, retry: $retry);
    }

    public function testUserCodeCallingTheMarketplaceAndQueryIsTestedAgainstTheMock(): void
    {
        $http = new MockBackend([
            MockBackend::json(['items' => [self::LISTING], 'total' => 1]),
            MockBackend::json([
                'source' => 'sales-by-region',
                'results' => [['region' => 'EU', 'revenue' => 1200.5], ['region' => 'US', 'revenue' => '9007199254740993']],
                'columns' => [['name' => 'region', 'type' => 'string'], ['name' => 'revenue', 'type' => 'number']],
                'meta' => ['request_id' => 'req_q1', 'cached' => false, 'duration_ms' => 12.5, 'row_count' => 2, 'truncated' => false, 'credits' => 3],
            ]),
        ]);

        $summary = (new TopListing(self::client($http)))->run('sales', 'sales', ['year' => 2024]);

        $this->assertSame(['listing' => 'sales-by-region', 'owner' => 'Acme Data', 'rows' => 2, 'credits' => 3], $summary);
        [$search, $query] = $http->requests();
        $this->assertSame(['GET', self::URL . '/v1/marketplace/listings?q=sales&category=sales&limit=1'], [$search->method, $search->url]);
        $this->assertSame('/v1/marketplace/listings', $search->path());
        $this->assertSame(['q' => 'sales', 'category' => 'sales', 'limit' => '1'], $search->query());
        $this->assertSame('Bearer qry_live_test', $search->header('authorization'));
        $this->assertSame('application/json', $search->header('Accept'));
        $this->assertNull($search->body);
        $this->assertNull($search->json());
        $this->assertSame(['POST', '/v1/query'], [$query->method, $query->path()]);
        $this->assertSame(['source' => 'sales-by-region', 'params' => ['year' => 2024], 'max_credits' => 3], $query->json());
        $this->assertSame('application/json', $query->header('content-type'));
        $this->assertStringStartsWith('qc-', (string) $query->header('Idempotency-Key'));
        $this->assertGreaterThan(100.0, $query->timeout); // what was left of the client's 120 s
        $this->assertSame(0, $http->remaining());
    }

    public function testTheTypedResultsAreTheClientsModels(): void
    {
        $http = new MockBackend([
            MockBackend::json(['items' => [self::LISTING + ['scheduled_price' => 4, 'price_effective_at' => '2026-12-01T00:00:00.000Z']], 'total' => 1]),
            MockBackend::json(['source' => 'sales-by-region', 'results' => [['n' => 1]], 'columns' => [['name' => 'n', 'type' => 'integer']], 'meta' => ['request_id' => 'req_q2', 'row_count' => 1, 'credits' => 3, 'version' => 2]]),
        ]);
        $client = self::client($http);

        $listings = $client->marketplace->search(q: 'sales');
        $this->assertContainsOnlyInstancesOf(Model\Listing::class, $listings);
        $this->assertSame(['sales-by-region', 3, 4, 'Acme Data', ['revenue', 'regions']], [$listings[0]->name, $listings[0]->price, $listings[0]->scheduled_price, $listings[0]->owner->name, $listings[0]->tags]);
        $answer = $client->query('sales-by-region');
        $this->assertSame([[['n' => 1]], 'n', 'req_q2', 2], [$answer->results, $answer->columns[0]->name, $answer->meta->request_id, $answer->meta->version]);
        $this->assertSame(['source' => 'sales-by-region', 'params' => []], $http->lastRequest()->json());
        $this->assertSame('{"source":"sales-by-region","params":{}}', $http->lastRequest()->body); // params always an object
    }

    public function testAnEmptySearchSendsNoQuery(): void
    {
        $http = new MockBackend([MockBackend::json(['items' => [], 'total' => 0])]);
        $this->assertNull((new TopListing(self::client($http)))->run('nothing', 'sales', []));
        $this->assertCount(1, $http);
    }

    public function testAQueuedErrorEnvelopeThrowsItsFamilyWithCodeRequestIdAndDetails(): void
    {
        $http = new MockBackend([
            MockBackend::error(400, 'INVALID_PARAMS', 'Invalid params for sales-by-region.', 'req_bad1', details: [
                ['param' => 'year', 'message' => 'must be an integer'],
            ]),
            MockBackend::error(404, 'NOT_FOUND', 'No listing "gone".', 'req_gone'),
        ]);
        $client = self::client($http);
        try {
            $client->query('sales-by-region', ['year' => 'last year']);
            $this->fail('expected an InvalidParamsException');
        } catch (Exception\InvalidParamsException $e) {
            $this->assertSame(['INVALID_PARAMS', 400, 'req_bad1', 'Invalid params for sales-by-region.'], [$e->errorCode, $e->status, $e->requestId, $e->reason]);
            $this->assertSame('INVALID_PARAMS: Invalid params for sales-by-region. (request req_bad1)', $e->getMessage());
            $this->assertCount(1, $e->details);
            $this->assertSame(['year', 'must be an integer'], [$e->details[0]->param, $e->details[0]->message]);
        }
        try {
            $client->marketplace->get('gone');
            $this->fail('expected a NotFoundException');
        } catch (Exception\NotFoundException $e) {
            $this->assertSame(['NOT_FOUND', 404, 'req_gone'], [$e->errorCode, $e->status, $e->requestId]);
        }
        $this->assertSame(self::URL . '/v1/marketplace/listings/gone', $http->lastRequest()->url);
    }

    public function testAQueued429IsARateLimitExceptionWithRetryAfterWhenRetriesAreOff(): void
    {
        $http = new MockBackend([MockBackend::error(429, 'RATE_LIMIT_EXCEEDED', 'Too many requests.', 'req_slow', retryAfter: 2.5)]);
        try {
            self::client($http, new RetryPolicy(retries: 0))->marketplace->search(q: 'sales');
            $this->fail('expected a RateLimitException');
        } catch (Exception\RateLimitException $e) {
            $this->assertSame(['RATE_LIMIT_EXCEEDED', 429, 'req_slow', 2.5], [$e->errorCode, $e->status, $e->requestId, $e->retryAfter]);
        }
        $this->assertCount(1, $http);
    }

    public function testTheRetryPolicyAppliesToQueuedAnswers(): void
    {
        $retry = new RetryPolicy(retries: 3, baseDelay: 0.0);
        $http = new MockBackend([
            MockBackend::error(429, 'RATE_LIMIT_EXCEEDED', 'Too many requests.', 'req_r1', retryAfter: 0.01),
            MockBackend::error(503, 'SOURCE_UNAVAILABLE', 'The warehouse is down.', 'req_r2', retryAfter: 0.01),
            MockBackend::networkError(),
            MockBackend::json(['source' => 's', 'results' => [['n' => 7]], 'columns' => [], 'meta' => ['request_id' => 'req_r4', 'row_count' => 1, 'credits' => 1]]),
        ]);
        $answer = self::client($http, $retry)->query('s', ['n' => 7]);
        $this->assertSame(7, $answer->results[0]['n']);
        $this->assertCount(4, $http);
        $keys = array_map(static fn (HttpRequest $r) => $r->header('Idempotency-Key'), $http->requests());
        $this->assertCount(1, array_unique($keys), 'a retry sends the same Idempotency-Key');

        $quota = new MockBackend([
            MockBackend::error(429, 'QUOTA_EXCEEDED', 'No credits left.', 'req_q', retryAfter: 0.01),
            MockBackend::json(['items' => [], 'total' => 0]),
        ]);
        try {
            self::client($quota, $retry)->marketplace->search();
            $this->fail('expected a QuotaExceededException');
        } catch (Exception\QuotaExceededException $e) {
            $this->assertSame('req_q', $e->requestId);
        }
        $this->assertSame([1, 1], [count($quota), $quota->remaining()], 'QUOTA_EXCEEDED is not retried');

        $spent = new MockBackend(array_fill(0, 4, MockBackend::error(429, 'RATE_LIMIT_EXCEEDED', 'Too many requests.', 'req_x', retryAfter: 0.01)));
        try {
            self::client($spent, new RetryPolicy(retries: 2, baseDelay: 0.0))->query('s');
            $this->fail('expected a RateLimitException once the retries are spent');
        } catch (Exception\RateLimitException $e) {
            $this->assertSame(0.01, $e->retryAfter);
        }
        $this->assertSame([3, 1], [count($spent), $spent->remaining()]);
    }

    public function testNoAnswerAndNoAnswerInTimeFlowAsFromTheNetwork(): void
    {
        $http = new MockBackend([MockBackend::networkError('connection reset')]);
        try {
            self::client($http)->query('s');
            $this->fail('expected a NetworkException');
        } catch (Exception\NetworkException $e) {
            $this->assertSame(['NETWORK_ERROR', 0], [$e->errorCode, $e->status]);
            $this->assertStringContainsString('connection reset', $e->getMessage());
        }
        $late = new MockBackend([MockBackend::timeout()]);
        try {
            (new Client(self::URL, apiKey: 'k', timeout: 5.0, http: $late))->connections->list();
            $this->fail('expected a TimeoutException');
        } catch (Exception\TimeoutException $e) {
            $this->assertStringContainsString('GET /v1/owner/connections did not finish within 5', $e->getMessage());
        }
    }

    public function testCallableAnswersAFallbackAndAnUnansweredRequest(): void
    {
        $http = new MockBackend(
            [static fn (HttpRequest $r) => MockBackend::json(['connection' => [
                'id' => 'conn_1',
                'name' => $r->json()['name'],
                'type' => $r->json()['type'],
                'config' => ['host' => $r->json()['config']['host']], // secrets are never returned
                'secret_fields' => ['password'],
                'created_at' => '2026-11-27T00:00:00.000Z',
                'updated_at' => '2026-11-27T00:00:00.000Z',
            ]], 201)],
            fallback: static fn (HttpRequest $r) => $r->path() === '/v1/connectors'
                ? MockBackend::json(['connectors' => [['type' => 'postgres', 'display_name' => 'PostgreSQL', 'secret_fields' => ['password']]]])
                : MockBackend::error(404, 'NOT_FOUND', "No route {$r->path()}.", 'req_404'),
        );
        $client = self::client($http);
        $created = $client->connections->create('shop', 'postgres', ['host' => 'db.internal', 'password' => 's3cret']);
        $this->assertInstanceOf(Model\Connection::class, $created);
        $this->assertSame(['conn_1', 'shop', 'postgres', ['host' => 'db.internal']], [$created->id, $created->name, $created->type, $created->config]);
        $this->assertSame(['POST', '/v1/owner/connections', []], [$http->requests()[0]->method, $http->requests()[0]->path(), $http->requests()[0]->query()]);
        $this->assertSame(['host' => 'db.internal', 'password' => 's3cret'], $http->requests()[0]->json()['config']);
        $this->assertSame('PostgreSQL', $client->connectors->list()->connectors[0]->display_name);
        $this->assertSame('/v1/connectors', $http->lastRequest()->path());
        $this->expectException(Exception\NotFoundException::class);
        $client->statements->get();
    }

    public function testARequestWithNoAnswerQueuedFailsTheTestAndIsNotRetried(): void
    {
        $http = new MockBackend();
        try {
            self::client($http, new RetryPolicy(retries: 3, baseDelay: 0.0))->marketplace->search(q: 'x');
            $this->fail('expected an UnderflowException');
        } catch (\UnderflowException $e) {
            $this->assertStringContainsString('GET ' . self::URL . '/v1/marketplace/listings?q=x', $e->getMessage());
        }
        $this->assertCount(1, $http);
        $this->expectException(\UnexpectedValueException::class);
        self::client(new MockBackend([static fn () => 'not a response']))->query('s');
    }

    public function testOAuthTokenRequestsGoThroughTheBackendToo(): void
    {
        $token = static fn (string $t) => MockBackend::json(['access_token' => $t, 'token_type' => 'Bearer', 'expires_in' => 3600]);
        $ok = MockBackend::json(['source' => 's', 'results' => [], 'columns' => [], 'meta' => ['row_count' => 0]]);
        $http = new MockBackend([
            $token('tok_1'),
            $ok,
            MockBackend::error(401, 'UNAUTHENTICATED', 'The token was revoked.', 'req_401'),
            $token('tok_2'),
            $ok,
        ]);
        $client = new Client(self::URL, oauth: new OAuthCredentials('cli_1', 'sec_1', 'query'), http: $http, retry: new RetryPolicy(retries: 0));
        $client->query('s');
        $client->query('s');
        $sent = array_map(static fn (HttpRequest $r) => "{$r->method} {$r->path()} " . $r->header('Authorization'), $http->requests());
        $this->assertSame([
            'POST /oauth/token Basic ' . base64_encode('cli_1:sec_1'),
            'POST /v1/query Bearer tok_1',
            'POST /v1/query Bearer tok_1',
            'POST /oauth/token Basic ' . base64_encode('cli_1:sec_1'),
            'POST /v1/query Bearer tok_2',
        ], $sent);
        $this->assertSame('grant_type=client_credentials&scope=query', $http->requests()[0]->body);
    }

    public function testListParamsSignUpAndNoContent(): void
    {
        $http = new MockBackend([
            MockBackend::json(['source' => 'sales', 'results' => [], 'columns' => [], 'meta' => ['row_count' => 0]]),
            MockBackend::json(null, 204),
        ]);
        $client = self::client($http);
        $client->analytics->get('sales by region', ['region' => ['EU', 'US'], 'year' => 2024, 'skip' => null], noCache: true);
        $get = $http->requests()[0];
        $this->assertSame('/v1/analytics/sales%20by%20region', $get->path());
        $this->assertSame(['region' => ['EU', 'US'], 'year' => '2024'], $get->query());
        $this->assertSame('no-cache', $get->header('cache-control'));
        $client->tools->remove('sales');
        $this->assertSame('DELETE', $http->lastRequest()->method);

        $signUp = new MockBackend([MockBackend::json([
            'account' => ['id' => 'acc_1', 'email' => 'a@example.com', 'name' => 'A', 'plan' => 'free', 'created_at' => '2026-11-27T00:00:00.000Z'],
            'key' => ['id' => 'key_1', 'name' => 'default', 'prefix' => 'qry_live_ab', 'scopes' => ['query'], 'created_at' => '2026-11-27T00:00:00.000Z', 'secret' => 'qry_live_abc'],
        ], 201)]);
        $made = Client::signUp(self::URL, 'a@example.com', 'A', http: $signUp);
        $this->assertSame(['acc_1', 'qry_live_abc'], [$made['account']->id, $made['key']->secret]);
        $this->assertSame(['email' => 'a@example.com', 'name' => 'A'], $signUp->lastRequest()->json());
        $this->assertNull($signUp->lastRequest()->header('Authorization'), 'sign-up sends no credential');
    }

    public function testAnyHttpBackendCanCarryTheClient(): void
    {
        $backend = new class () implements HttpBackend {
            /** @var list<string> */
            public array $seen = [];

            public function send(HttpRequest $request): HttpResponse
            {
                $this->seen[] = "{$request->method} {$request->url}";
                return new HttpResponse(200, ['Content-Type' => 'application/json', 'X-Request-Id' => 'req_own'], '{"items":[],"total":0}');
            }
        };
        $client = new Client(self::URL . '/prefix/', apiKey: 'k', http: $backend);
        $this->assertSame([], $client->marketplace->search(category: 'sales'));
        $this->assertSame(['GET ' . self::URL . '/prefix/v1/marketplace/listings?category=sales'], $backend->seen);
        $response = new HttpResponse(200, ['X-Request-Id' => 'req_own']);
        $this->assertSame(['x-request-id' => 'req_own'], $response->headers);
        $this->assertSame('req_own', $response->header('X-REQUEST-ID'));
    }
}
