// Query parameters as they go on the wire: every type explicit, values exact, wrong kinds refused.
import { type BoundParam, isConnectorError } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { toQueryParameters } from './bigquery-params.js';

function param(
  name: string,
  type: BoundParam['type'],
  value: BoundParam['value'],
  array = false,
): BoundParam {
  return { name, type, value, array };
}

describe('toQueryParameters', () => {
  it('sends no parameters for a query without any', () => {
    expect(toQueryParameters([])).toBeUndefined();
  });

  it('types every scalar explicitly and keeps values exact', () => {
    expect(
      toQueryParameters([
        param('small', 'integer', 42),
        param('big', 'integer', -9223372036854775808n),
        param('whole', 'number', 3),
        param('tiny', 'number', 1e-10),
        param('text', 'string', "O'Brien \u{1F680}"),
        param('choice', 'enum', 'north'),
        param('flag', 'boolean', false),
        param('day', 'date', '2024-02-29'),
        param('at', 'timestamp', '2024-01-31T12:34:56.789Z'),
      ]),
    ).toEqual([
      { name: 'small', parameterType: { type: 'INT64' }, parameterValue: { value: '42' } },
      { name: 'big', parameterType: { type: 'INT64' }, parameterValue: { value: '-9223372036854775808' } },
      { name: 'whole', parameterType: { type: 'FLOAT64' }, parameterValue: { value: 3 } },
      { name: 'tiny', parameterType: { type: 'FLOAT64' }, parameterValue: { value: 1e-10 } },
      { name: 'text', parameterType: { type: 'STRING' }, parameterValue: { value: "O'Brien \u{1F680}" } },
      { name: 'choice', parameterType: { type: 'STRING' }, parameterValue: { value: 'north' } },
      { name: 'flag', parameterType: { type: 'BOOL' }, parameterValue: { value: false } },
      { name: 'day', parameterType: { type: 'DATE' }, parameterValue: { value: '2024-02-29' } },
      {
        name: 'at',
        parameterType: { type: 'TIMESTAMP' },
        parameterValue: { value: '2024-01-31T12:34:56.789Z' },
      },
    ]);
  });

  it('types NULLs, and sends empty and NULL arrays as typed empty arrays', () => {
    expect(
      toQueryParameters([
        param('none', 'timestamp', null),
        param('ids', 'integer', [1, 9007199254740993n], true),
        param('empty', 'date', [], true),
        param('missing', 'string', null, true),
        param('days', 'date', ['2024-02-29'], true),
      ]),
    ).toEqual([
      { name: 'none', parameterType: { type: 'TIMESTAMP' }, parameterValue: { value: null } },
      {
        name: 'ids',
        parameterType: { type: 'ARRAY', arrayType: { type: 'INT64' } },
        parameterValue: { arrayValues: [{ value: '1' }, { value: '9007199254740993' }] },
      },
      {
        name: 'empty',
        parameterType: { type: 'ARRAY', arrayType: { type: 'DATE' } },
        parameterValue: { arrayValues: [] },
      },
      {
        name: 'missing',
        parameterType: { type: 'ARRAY', arrayType: { type: 'STRING' } },
        parameterValue: { arrayValues: [] },
      },
      {
        name: 'days',
        parameterType: { type: 'ARRAY', arrayType: { type: 'DATE' } },
        parameterValue: { arrayValues: [{ value: '2024-02-29' }] },
      },
    ]);
  });

  it('refuses a value of the wrong kind with PARAM_INVALID naming the param', () => {
    for (const bad of [
      param('n', 'integer', 1.5),
      param('n', 'number', Number.NaN),
      param('n', 'boolean', 'yes'),
      param('n', 'date', '2024-2-29'),
      param('n', 'timestamp', 'yesterday'),
      param('n', 'string', 1),
      param('n', 'integer', ['x'], true),
    ]) {
      let thrown: unknown;
      try {
        toQueryParameters([bad]);
      } catch (error) {
        thrown = error;
      }
      expect(isConnectorError(thrown, 'PARAM_INVALID'), `${bad.type} ${String(bad.value)}`).toBe(true);
      expect((thrown as { details: unknown }).details).toEqual([{ param: 'n', message: expect.any(String) }]);
    }
  });
});
