// Driver and service errors → ConnectorError codes, never with the service's message text.
import { ConnectorError } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { connectFailure, isSessionGone, mapSnowflakeError } from './snowflake-errors.js';

function sfError(
  name: string,
  code: string | number,
  message = 'Object "SECRET_TABLE" does not exist',
): Error {
  return Object.assign(new Error(message), { name, code });
}

describe('mapSnowflakeError', () => {
  it('maps lost sessions and networks to CONNECT_FAILED (retryable)', () => {
    for (const error of [
      sfError('NetworkError', 401001),
      sfError('RequestFailedError', 401002),
      sfError('ClientError', 407002),
      sfError('OperationFailedError', '390111'),
      sfError('OperationFailedError', '390114'),
    ]) {
      const mapped = mapSnowflakeError(error);
      expect(mapped.code, String(error.name)).toBe('CONNECT_FAILED');
      expect(mapped.retryable).toBe(true);
      expect(isSessionGone(error)).toBe(true);
    }
  });

  it('maps the service timeout and cancel to QUERY_TIMEOUT and QUERY_ABORTED', () => {
    expect(mapSnowflakeError(sfError('OperationFailedError', '000630')).code).toBe('QUERY_TIMEOUT');
    expect(mapSnowflakeError(sfError('OperationFailedError', '000604')).code).toBe('QUERY_ABORTED');
  });

  it('maps statement errors to QUERY_FAILED with the code kept and the text dropped', () => {
    for (const code of ['002003', '001003', '000008', '003001', '100038']) {
      const mapped = mapSnowflakeError(sfError('OperationFailedError', code));
      expect(mapped.code).toBe('QUERY_FAILED');
      expect(mapped.driverCode).toBe(code);
      expect(mapped.message).not.toContain('SECRET_TABLE');
      expect(isSessionGone(sfError('OperationFailedError', code))).toBe(false);
    }
  });

  it('passes ConnectorErrors through, and makes any login failure CONNECT_FAILED', () => {
    const own = new ConnectorError('PARAM_INVALID', 'bad');
    expect(mapSnowflakeError(own)).toBe(own);
    const login = connectFailure(sfError('OperationFailedError', '390100', 'Incorrect username or password'));
    expect(login.code).toBe('CONNECT_FAILED');
    expect(login.driverCode).toBe('390100');
    expect(login.message).not.toContain('password');
  });
});
