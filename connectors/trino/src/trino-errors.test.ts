import { ConnectorError } from '@quarry/sdk-connector';
import type { QueryError } from 'trino-client';
import { describe, expect, it } from 'vitest';
import { mapTrinoError, trinoQueryError } from './trino-errors.js';

function pageError(
  errorName: string,
  errorType: string,
  message = 'line 1:8: value secret_value',
): QueryError {
  return {
    message,
    errorCode: 1,
    errorName,
    errorType,
    failureInfo: { type: 'io.trino.spi.TrinoException', message, suppressed: [], stack: [] },
  };
}

describe('trino error mapping', () => {
  it('maps result-page errors by errorName and errorType, without Trino’s message', () => {
    const cases: [string, string, string, boolean][] = [
      ['EXCEEDED_TIME_LIMIT', 'INSUFFICIENT_RESOURCES', 'QUERY_TIMEOUT', false],
      ['USER_CANCELED', 'USER_ERROR', 'QUERY_ABORTED', false],
      ['SERVER_STARTING_UP', 'INTERNAL_ERROR', 'CONNECT_FAILED', true],
      ['SYNTAX_ERROR', 'USER_ERROR', 'QUERY_FAILED', false],
      ['PERMISSION_DENIED', 'USER_ERROR', 'QUERY_FAILED', false],
      ['CLUSTER_OUT_OF_MEMORY', 'INSUFFICIENT_RESOURCES', 'QUERY_FAILED', true],
      ['JDBC_ERROR', 'EXTERNAL', 'QUERY_FAILED', true],
    ];
    for (const [name, type, code, retryable] of cases) {
      const error = trinoQueryError(pageError(name, type));
      expect(error, name).toMatchObject({ code, driverCode: name, retryable });
      expect(error.message).not.toContain('secret_value');
      // Trino's own text is kept for logs only, as the cause.
      expect(String((error.cause as Error).message)).toContain('secret_value');
    }
  });

  it('maps HTTP statuses and socket errors, never keeping the axios error (it holds the credentials)', () => {
    const axiosLike = (status: number) =>
      Object.assign(new Error(`Request failed with status code ${status}`), {
        response: { status },
        config: { auth: { username: 'u', password: 'pw-in-config' } },
      });
    expect(mapTrinoError(axiosLike(401))).toMatchObject({
      code: 'CONNECT_FAILED',
      retryable: false,
      driverCode: 'HTTP_401',
    });
    expect(mapTrinoError(axiosLike(503))).toMatchObject({ code: 'CONNECT_FAILED', retryable: true });
    expect(mapTrinoError(axiosLike(404))).toMatchObject({ code: 'QUERY_FAILED', driverCode: 'HTTP_404' });
    for (const status of [401, 503, 404]) expect(mapTrinoError(axiosLike(status)).cause).toBeUndefined();
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:8080'), { code: 'ECONNREFUSED' });
    expect(mapTrinoError(refused)).toMatchObject({ code: 'CONNECT_FAILED', driverCode: 'ECONNREFUSED' });
    expect(mapTrinoError(Object.assign(new Error('x'), { code: 'CERT_HAS_EXPIRED' })).code).toBe(
      'CONNECT_FAILED',
    );
    expect(mapTrinoError(new SyntaxError('Unexpected token <'))).toMatchObject({
      driverCode: 'BAD_RESPONSE',
    });
    const passthrough = new ConnectorError('PARAM_INVALID', 'bad');
    expect(mapTrinoError(passthrough)).toBe(passthrough);
  });
});
