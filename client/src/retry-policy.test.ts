// The retry policy as a pure function: which errors are retried on which calls, the bounds of
// the jittered backoff, and retry_after as a floor.
import { describe, expect, it } from 'vitest';
import {
  QuarryError as BaseError,
  ConflictError,
  ForbiddenError,
  InvalidParamsError,
  NetworkError,
  type QuarryError,
  QuotaExceededError,
  RateLimitError,
  SourceUnavailableError,
  TimeoutError,
  UnauthenticatedError,
  UpstreamError,
} from './errors.js';
import { isRetryable, type RetryOptions, retryDelayMs } from './retry-policy.js';

const policy: RetryOptions = { retries: 3, baseDelayMs: 100, maxDelayMs: 1_000 };
const make = <T extends QuarryError>(
  Class: new (init: ConstructorParameters<typeof BaseError>[0]) => T,
  status: number,
  retryAfter?: number,
) => new Class({ code: 'X', status, message: 'm', retryAfter });

describe('isRetryable', () => {
  it('retries a rate limit on any call, and transient failures only on idempotent calls', () => {
    expect(isRetryable(make(RateLimitError, 429), false)).toBe(true);
    for (const error of [
      make(SourceUnavailableError, 503),
      make(NetworkError, 0),
      make(UpstreamError, 502),
      make(BaseError, 504),
    ]) {
      expect(isRetryable(error, true), error.name).toBe(true);
      expect(isRetryable(error, false), error.name).toBe(false);
    }
  });

  it('never retries another 4xx, a quota, or a spent client timeout', () => {
    for (const error of [
      make(InvalidParamsError, 400),
      make(UnauthenticatedError, 401),
      make(ForbiddenError, 403),
      make(ConflictError, 409),
      make(QuotaExceededError, 429, 3600),
      make(TimeoutError, 0),
      make(BaseError, 500),
    ]) {
      expect(isRetryable(error, true), error.name).toBe(false);
    }
  });
});

describe('retryDelayMs', () => {
  it('draws full jitter below base × 2^retry, capped at maxDelayMs', () => {
    const error = make(SourceUnavailableError, 503);
    expect(retryDelayMs(error, 0, true, policy, () => 0)).toBe(0);
    expect(retryDelayMs(error, 0, true, policy, () => 0.5)).toBe(50);
    expect(retryDelayMs(error, 2, true, policy, () => 0.999)).toBeCloseTo(399.6);
    const capped = { ...policy, retries: 10 };
    expect(retryDelayMs(error, 8, true, capped, () => 0.5)).toBe(500);
  });

  it('adds the jitter on top of retry_after, so no retry is early', () => {
    const error = make(RateLimitError, 429, 0.75);
    expect(retryDelayMs(error, 0, false, policy, () => 0)).toBe(750);
    expect(retryDelayMs(error, 1, false, policy, () => 0.5)).toBe(850);
  });

  it('stops after `retries`, and when retry_after is beyond maxDelayMs', () => {
    const error = make(RateLimitError, 429, 0.1);
    expect(retryDelayMs(error, 2, true, policy, () => 0)).toBe(100);
    expect(retryDelayMs(error, 3, true, policy, () => 0)).toBeUndefined();
    expect(retryDelayMs(make(RateLimitError, 429, 2), 0, true, policy, () => 0)).toBeUndefined();
    expect(retryDelayMs(error, 0, true, { ...policy, retries: 0 }, () => 0)).toBeUndefined();
  });
});
