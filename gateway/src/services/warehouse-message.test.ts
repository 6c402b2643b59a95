import { ConnectorError } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { secretStrings, warehouseMessageOf } from './warehouse-message.js';

describe('warehouseMessageOf', () => {
  it("gives the driver's words behind a connector error, with every secret removed", () => {
    const driver = new Error('password authentication failed for user "owner" (password s3cret-pw)');
    const error = new ConnectorError('CONNECT_FAILED', 'could not open a Postgres session', {
      cause: driver,
    });
    expect(warehouseMessageOf(error, ['s3cret-pw'])).toBe(
      'password authentication failed for user "owner" (password ***)',
    );
    const url = new ConnectorError('CONNECT_FAILED', 'x', {
      cause: new Error('cannot reach postgres://owner:hunter22@db.example.com/x'),
    });
    expect(warehouseMessageOf(url, [])).toBe('cannot reach postgres://***@db.example.com/x');
  });

  it("reads an AggregateError's inner errors, and prefers the connector's own warehouse message", () => {
    const refused = Object.assign(new AggregateError([new Error('connect ECONNREFUSED 127.0.0.1:1')], ''), {
      code: 'ECONNREFUSED',
    });
    const error = new ConnectorError('CONNECT_FAILED', 'x', { cause: refused });
    expect(warehouseMessageOf(error, [])).toBe('ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1');
    const failed = new ConnectorError('QUERY_FAILED', 'x', {
      warehouseMessage: 'relation "t" does not exist',
    });
    expect(warehouseMessageOf(failed, [])).toBe('relation "t" does not exist');
    expect(warehouseMessageOf(new ConnectorError('CLOSED', 'closed'), [])).toBeUndefined();
  });

  it('collects the strings of nested secret values', () => {
    expect(secretStrings(['a', { private_key: 'k', nested: { token: 't' } }, 3])).toEqual(['a', 'k', 't']);
  });
});
