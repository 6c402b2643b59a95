<?php

declare(strict_types=1);

namespace Quarry\Tests;

use PHPUnit\Framework\TestCase;
use Quarry\ErrorFactory;
use Quarry\Exception;
use Quarry\RetryPolicy;

final class RetryPolicyTest extends TestCase
{
    public function testWaitsRetryAfterPlusJitter(): void
    {
        $limited = new Exception\RateLimitException('RATE_LIMIT_EXCEEDED', 429, 'm', retryAfter: 1.5);
        $policy = new RetryPolicy();
        $this->assertSame(1.5, $policy->delay($limited, 0, false, static fn () => 0.0));
        $this->assertSame(2.5, $policy->delay($limited, 2, false, static fn () => 1.0));
    }

    public function testNeverRetriesQuotaOther4xxOrTooLongAWait(): void
    {
        $policy = new RetryPolicy();
        $this->assertNull($policy->delay(new Exception\QuotaExceededException('QUOTA_EXCEEDED', 429, 'm', retryAfter: 10), 0, true));
        $this->assertNull($policy->delay(new Exception\InvalidParamsException('INVALID_PARAMS', 400, 'm'), 0, true));
        $this->assertNull($policy->delay(new Exception\RateLimitException('RATE_LIMIT_EXCEEDED', 429, 'm', retryAfter: 31), 0, true));
        $this->assertNull($policy->delay(new Exception\RateLimitException('RATE_LIMIT_EXCEEDED', 429, 'm', retryAfter: 1), 3, true));
        $network = new Exception\NetworkException('NETWORK_ERROR', 0, 'm');
        $this->assertNotNull($policy->delay($network, 0, true));
        $this->assertNull($policy->delay($network, 0, false));
    }

    public function testErrorFactoryMapsEnvelopeAndOAuthBodies(): void
    {
        $e = ErrorFactory::fromResponse(400, [], '{"error":{"code":"INVALID_PARAMS","message":"m","request_id":"req_1","details":[{"param":"year","message":"bad"}]}}');
        $this->assertInstanceOf(Exception\InvalidParamsException::class, $e);
        $this->assertSame(['req_1', 'year'], [$e->requestId, $e->details[0]->param]);
        $o = ErrorFactory::fromResponse(401, [], '{"error":"invalid_client"}');
        $this->assertInstanceOf(Exception\OAuthException::class, $o);
        $this->assertSame('invalid_client', $o->errorCode);
    }
}
