<?php

declare(strict_types=1);

namespace Quarry;

use Quarry\Exception\NetworkException;
use Quarry\Exception\QuarryException;
use Quarry\Exception\RateLimitException;
use Quarry\Exception\SourceUnavailableException;
use Quarry\Exception\TimeoutException;

/**
 * How the client retries: bounded attempts, exponential backoff with full jitter, never sooner
 * than the gateway's retry_after. retries 0 turns retries off.
 */
final class RetryPolicy
{
    /**
     * @param int $retries retries after the first attempt
     * @param float $baseDelay the first backoff's upper bound in seconds; it doubles per retry
     * @param float $maxDelay the largest backoff in seconds; a longer retry_after is not waited
     *     out: the exception is thrown at once, with its retryAfter
     */
    public function __construct(
        public readonly int $retries = 3,
        public readonly float $baseDelay = 0.25,
        public readonly float $maxDelay = 30.0,
    ) {
    }

    /**
     * Whether $error may be retried. A rate-limited call was refused before any work, so it is
     * retried whatever the call; an unavailable source, a network error and 502/503/504 only on
     * idempotent calls. Never another 4xx: not QUOTA_EXCEEDED, nor the client's own timeout.
     */
    public function isRetryable(QuarryException $error, bool $idempotent): bool
    {
        if ($error instanceof RateLimitException) {
            return true;
        }
        if ($error instanceof TimeoutException || !$idempotent) {
            return false;
        }
        return $error instanceof SourceUnavailableException || $error instanceof NetworkException
            || in_array($error->status, [502, 503, 504], true);
    }

    /**
     * Seconds to wait before retry number $retry (0 for the first), or null to throw instead:
     * full jitter up to baseDelay × 2^retry (capped at maxDelay) on top of retry_after.
     *
     * @param ?callable(): float $random a number in [0, 1)
     */
    public function delay(QuarryException $error, int $retry, bool $idempotent, ?callable $random = null): ?float
    {
        if ($retry >= $this->retries || !$this->isRetryable($error, $idempotent)) {
            return null;
        }
        $floor = $error->retryAfter ?? 0.0;
        if ($floor > $this->maxDelay) {
            return null;
        }
        $random ??= static fn (): float => mt_rand() / (mt_getrandmax() + 1);
        return $floor + $random() * min($this->maxDelay, $this->baseDelay * 2 ** $retry);
    }
}
