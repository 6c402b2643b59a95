<?php

declare(strict_types=1);

namespace Quarry\Http;

/**
 * What the client sends its HTTP through: one exchange, no retries, no error mapping (the client
 * does those). Give one as `new Quarry\Client(…, http: $backend)`: CurlBackend and
 * StreamsBackend are the client's own (what 'curl' and 'streams' pick), Quarry\Testing\MockBackend
 * answers from a test without a network, and your own can wrap another HTTP stack.
 */
interface HttpBackend
{
    /**
     * Sends $request once and returns the answer, whatever its status: a 4xx or 5xx is an
     * answer, which the client turns into its exception (and retries under its RetryPolicy).
     * Redirects are not followed.
     *
     * @throws \Quarry\Exception\NetworkException no answer came (refused, DNS, TLS, reset)
     * @throws \Quarry\Exception\TimeoutException no answer within $request->timeout seconds
     */
    public function send(HttpRequest $request): HttpResponse;
}
