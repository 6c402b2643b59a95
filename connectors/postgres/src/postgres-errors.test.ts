import { ConnectorError } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { mapPostgresError } from './postgres-errors.js';

/** The fields pg's DatabaseError carries. */
function serverError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'ERROR' });
}

describe('mapPostgresError', () => {
  it('maps refused connections, DNS, TLS and dropped sockets to CONNECT_FAILED', () => {
    for (const error of [
      Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('getaddrinfo ENOTFOUND db.secret-host.internal'), { code: 'ENOTFOUND' }),
      Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout expired'),
      new Error('The server does not support SSL connections'),
    ]) {
      const mapped = mapPostgresError(error);
      expect(mapped.code, error.message).toBe('CONNECT_FAILED');
      expect(mapped.retryable).toBe(true);
      expect(mapped.message).not.toMatch(/10\.0\.0\.5|secret-host/);
    }
  });

  it('maps authentication failures and a missing database to CONNECT_FAILED without names', () => {
    const auth = mapPostgresError(serverError('28P01', 'password authentication failed for user "ana"'));
    expect(auth).toMatchObject({ code: 'CONNECT_FAILED', driverCode: '28P01' });
    expect(auth.message).not.toContain('ana');
    const db = mapPostgresError(serverError('3D000', 'database "payroll_secret" does not exist'));
    expect(db).toMatchObject({ code: 'CONNECT_FAILED', driverCode: '3D000' });
    expect(db.message).not.toContain('payroll_secret');
    expect(
      mapPostgresError(serverError('57P01', 'terminating connection due to administrator command')).code,
    ).toBe('CONNECT_FAILED');
  });

  it('maps rejected queries to QUERY_FAILED with a generic message and the SQLSTATE', () => {
    const syntax = mapPostgresError(serverError('42601', 'syntax error at or near "hunter2"'));
    expect(syntax).toMatchObject({ code: 'QUERY_FAILED', driverCode: '42601', retryable: false });
    expect(syntax.message).not.toContain('hunter2');
    expect(
      mapPostgresError(serverError('25006', 'cannot execute INSERT in a read-only transaction')),
    ).toMatchObject({
      code: 'QUERY_FAILED',
      driverCode: '25006',
    });
    expect(
      mapPostgresError(serverError('42501', 'permission denied for table salaries')).message,
    ).not.toContain('salaries');
    expect(mapPostgresError(serverError('40001', 'could not serialize access')).retryable).toBe(true);
    expect(mapPostgresError(serverError('XX000', 'internal error in /var/lib')).code).toBe('QUERY_FAILED');
  });

  it('maps a cancelled statement to QUERY_TIMEOUT', () => {
    expect(
      mapPostgresError(serverError('57014', 'canceling statement due to statement timeout')),
    ).toMatchObject({
      code: 'QUERY_TIMEOUT',
      driverCode: '57014',
    });
  });

  it('passes ConnectorErrors through and maps anything else to QUERY_FAILED', () => {
    const own = new ConnectorError('QUERY_ABORTED', 'aborted');
    expect(mapPostgresError(own)).toBe(own);
    expect(mapPostgresError('weird').code).toBe('QUERY_FAILED');
    expect(mapPostgresError(new TypeError('x is not a function')).code).toBe('QUERY_FAILED');
  });
});
