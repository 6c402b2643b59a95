// Driver errors become ConnectorErrors with the right code and a message that never repeats the
// server's text (which can name the user and host).
import { ConnectorError } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { mapMysqlError } from './mysql-errors.js';

function serverError(errno: number, code: string, message: string): Error {
  return Object.assign(new Error(message), { errno, code, sqlState: 'HY000' });
}

describe('mapMysqlError', () => {
  it('maps refused connections and bad logins to CONNECT_FAILED without the server text', () => {
    const refused = mapMysqlError(
      Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:3306'), { code: 'ECONNREFUSED' }),
    );
    expect(refused.code).toBe('CONNECT_FAILED');
    expect(refused.retryable).toBe(true);
    expect(refused.message).not.toContain('10.0.0.7');
    const denied = mapMysqlError(
      serverError(
        1045,
        'ER_ACCESS_DENIED_ERROR',
        "Access denied for user 'owner'@'10.0.0.9' (using password: YES)",
      ),
    );
    expect(denied.code).toBe('CONNECT_FAILED');
    expect(denied.driverCode).toBe('ER_ACCESS_DENIED_ERROR');
    expect(denied.message).not.toMatch(/owner|10\.0\.0\.9/);
  });

  it('maps syntax, permission and read-only errors to QUERY_FAILED with the driver code', () => {
    for (const [errno, code] of [
      [1064, 'ER_PARSE_ERROR'],
      [1142, 'ER_TABLEACCESS_DENIED_ERROR'],
      [1792, 'ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION'],
      [1146, 'ER_NO_SUCH_TABLE'],
      [1366, 'ER_TRUNCATED_WRONG_VALUE_FOR_FIELD'],
    ] as const) {
      const mapped = mapMysqlError(serverError(errno, code, `secret text from user 'bob'@'db.internal'`));
      expect(mapped.code).toBe('QUERY_FAILED');
      expect(mapped.driverCode).toBe(code);
      expect(mapped.message).not.toMatch(/bob|db\.internal|secret/);
    }
  });

  it('maps server statement timeouts to QUERY_TIMEOUT and KILL QUERY to QUERY_ABORTED', () => {
    expect(mapMysqlError(serverError(1969, 'ER_STATEMENT_TIMEOUT', 'x')).code).toBe('QUERY_TIMEOUT');
    expect(mapMysqlError(serverError(3024, 'ER_QUERY_TIMEOUT', 'x')).code).toBe('QUERY_TIMEOUT');
    expect(mapMysqlError(serverError(1317, 'ER_QUERY_INTERRUPTED', 'x')).code).toBe('QUERY_ABORTED');
  });

  it('maps a lost connection to CONNECT_FAILED and passes ConnectorErrors through', () => {
    const lost = Object.assign(new Error('Connection lost: The server closed the connection.'), {
      code: 'PROTOCOL_CONNECTION_LOST',
      fatal: true,
    });
    expect(mapMysqlError(lost).code).toBe('CONNECT_FAILED');
    const own = new ConnectorError('CLOSED', 'closed');
    expect(mapMysqlError(own)).toBe(own);
  });
});
