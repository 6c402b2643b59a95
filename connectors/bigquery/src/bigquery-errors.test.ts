// BigQuery, socket and unknown errors mapped to connector codes without BigQuery's text.
import { ConnectorError } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { mapBigqueryError, reasonOf } from './bigquery-errors.js';

/** An error as the driver raises it: `ApiError` with the HTTP status and BigQuery's errors. */
function apiError(code: number | undefined, reason: string, message = `${reason}: SELECT secret FROM t`) {
  return Object.assign(new Error(message), { code, errors: [{ reason, message, domain: 'global' }] });
}

describe('mapBigqueryError', () => {
  it.each([
    [400, 'invalidQuery', 'QUERY_FAILED'],
    [404, 'notFound', 'QUERY_FAILED'],
    [403, 'accessDenied', 'QUERY_FAILED'],
    [400, 'bytesBilledLimitExceeded', 'QUERY_FAILED'],
    [400, 'billingTierLimitExceeded', 'QUERY_FAILED'],
    [400, 'stopped', 'QUERY_FAILED'],
    [400, 'timeout', 'QUERY_TIMEOUT'],
    [401, 'authError', 'CONNECT_FAILED'],
    [401, 'invalidQuery', 'CONNECT_FAILED'],
    [500, 'backendError', 'CONNECT_FAILED'],
    [undefined, 'invalidQuery', 'QUERY_FAILED'],
  ] as const)('HTTP %s %s → %s, reason as driverCode, no BigQuery text', (status, reason, code) => {
    const mapped = mapBigqueryError(apiError(status, reason));
    expect([mapped.code, mapped.driverCode]).toEqual([code, reason]);
    expect(mapped.message).not.toContain('secret');
  });

  it('marks quota and rate limits retryable', () => {
    for (const reason of ['quotaExceeded', 'rateLimitExceeded']) {
      const mapped = mapBigqueryError(apiError(403, reason));
      expect([mapped.code, mapped.retryable]).toEqual(['QUERY_FAILED', true]);
    }
    expect(mapBigqueryError(apiError(400, 'invalidQuery')).retryable).toBe(false);
  });

  it('classifies by HTTP status when the reason is unknown, and never uses free text as a code', () => {
    expect(mapBigqueryError(apiError(503, 'somethingNew'))).toMatchObject({
      code: 'CONNECT_FAILED',
      driverCode: 'somethingNew',
    });
    const spaced = mapBigqueryError(apiError(404, 'not a reason; DROP'));
    expect([spaced.code, spaced.driverCode]).toEqual(['QUERY_FAILED', 'HTTP_404']);
    expect(mapBigqueryError(apiError(undefined, 'brandNewReason'))).toMatchObject({
      code: 'QUERY_FAILED',
      driverCode: 'brandNewReason',
      message: 'BigQuery rejected the query (brandNewReason)',
    });
  });

  it('prefers a reason it knows among several', () => {
    const error = { errors: [{ reason: 'jobBackendError' }, { reason: 'bytesBilledLimitExceeded' }] };
    expect(reasonOf(error)).toBe('bytesBilledLimitExceeded');
  });

  it('maps socket and TLS failures to CONNECT_FAILED', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'ECONNRESET', 'CERT_HAS_EXPIRED']) {
      const error = Object.assign(new Error(`request to https://x failed, reason: ${code}`), {
        code,
        type: 'system',
      });
      expect(mapBigqueryError(error)).toMatchObject({
        code: 'CONNECT_FAILED',
        driverCode: code,
        retryable: true,
      });
    }
  });

  it('passes ConnectorErrors through, and turns anything else into a generic QUERY_FAILED', () => {
    const own = new ConnectorError('PARAM_INVALID', 'param x: bad');
    expect(mapBigqueryError(own)).toBe(own);
    const mapped = mapBigqueryError(new TypeError('Cannot read properties of undefined (password=hunter2)'));
    expect([mapped.code, mapped.message]).toEqual(['QUERY_FAILED', 'the BigQuery request failed']);
  });
});
