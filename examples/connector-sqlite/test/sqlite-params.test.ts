// Validated params as sql.js binds them.
import type { BoundParam, ScalarParamType, ScalarValue } from '@quarry/sdk-connector';
import { isConnectorError } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { toWorkerParams } from '../src/sqlite-params.js';

function bound(type: ScalarParamType, value: ScalarValue | null): BoundParam {
  return { name: 'p', type, array: false, value };
}

describe('toWorkerParams', () => {
  it('binds booleans as 1/0, bigints as exact text, timestamps as SQLite UTC text', () => {
    expect(
      toWorkerParams([
        bound('boolean', true),
        bound('boolean', false),
        bound('integer', 42),
        bound('integer', -9223372036854775808n),
        bound('number', 1.5),
        bound('string', "O'Brien"),
        bound('enum', 'north'),
        bound('date', '2024-02-29'),
        bound('timestamp', '2024-06-30T21:59:59.999Z'),
        bound('timestamp', null),
      ]),
    ).toEqual([
      1,
      0,
      42,
      '-9223372036854775808',
      1.5,
      "O'Brien",
      'north',
      '2024-02-29',
      '2024-06-30 21:59:59.999',
      null,
    ]);
  });

  it('refuses an array bound to one placeholder with PARAM_INVALID', () => {
    let caught: unknown;
    try {
      toWorkerParams([{ name: 'ids', type: 'integer', array: true, value: [1, 2] }]);
    } catch (error) {
      caught = error;
    }
    expect(isConnectorError(caught, 'PARAM_INVALID')).toBe(true);
  });
});
