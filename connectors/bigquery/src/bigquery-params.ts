// Turns a compiled query's bound params into BigQuery query parameters, each with its explicit
// type. The driver would otherwise guess types from values, and it cannot guess a NULL or an
// empty array, and it guesses an integer-valued float (3.0) as INT64. Encoding goes through the
// driver's own `valueToQueryParameter_` with the type given (what its `types` option does), but
// the result is passed as `queryParameters`: with `params` + `types`, createQueryJob would also
// copy the `types` option itself into the request body, a field the REST API does not define.
import { BigQuery, type QueryParameter } from '@google-cloud/bigquery';
import { type BoundParam, ConnectorError, type ScalarValue } from '@quarry/sdk-connector';
import { BIGQUERY_PARAM_TYPES } from './bigquery-dialect.js';

const DATE_TEXT = /^\d{4}-\d{2}-\d{2}$/;

function invalid(name: string, message: string): ConnectorError {
  return new ConnectorError('PARAM_INVALID', `param ${name}: ${message}`, {
    details: [{ param: name, message }],
  });
}

/**
 * One scalar in the form the driver serialises exactly: INT64 as decimal text (so values past
 * 2^53 stay exact), DATE and TIMESTAMP wrapped in the driver's own value classes (the driver
 * reads `.value` of those types).
 */
function driverValue(param: BoundParam, value: ScalarValue): unknown {
  switch (param.type) {
    case 'integer':
      if (typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value))) {
        return value.toString();
      }
      throw invalid(param.name, 'expected an integer');
    case 'number':
      if (typeof value === 'number' && Number.isFinite(value)) return value;
      throw invalid(param.name, 'expected a finite number');
    case 'string':
    case 'enum':
      if (typeof value === 'string') return value;
      throw invalid(param.name, 'expected a string');
    case 'boolean':
      if (typeof value === 'boolean') return value;
      throw invalid(param.name, 'expected a boolean');
    case 'date':
      if (typeof value === 'string' && DATE_TEXT.test(value)) return BigQuery.date(value);
      throw invalid(param.name, 'expected a date YYYY-MM-DD');
    case 'timestamp':
      if (typeof value === 'string' && Number.isFinite(Date.parse(value))) return BigQuery.timestamp(value);
      throw invalid(param.name, 'expected an ISO-8601 timestamp');
  }
}

/**
 * The `queryParameters` (NAMED mode) for a compiled query, or undefined when it has none. A NULL
 * array is sent as an empty array: BigQuery's REST encoding has no NULL array value (and the
 * driver throws on one), and BigQuery returns a NULL array as `[]` anyway; `x IN UNNEST(@ids)`
 * matches nothing either way.
 */
export function toQueryParameters(bound: readonly BoundParam[]): QueryParameter[] | undefined {
  if (bound.length === 0) return undefined;
  return bound.map((param) => {
    const type = BIGQUERY_PARAM_TYPES[param.type];
    const parameter = param.array
      ? BigQuery.valueToQueryParameter_(
          ((param.value ?? []) as readonly ScalarValue[]).map((item) => driverValue(param, item)),
          [type],
        )
      : BigQuery.valueToQueryParameter_(
          param.value === null ? null : driverValue(param, param.value as ScalarValue),
          type,
        );
    return { ...parameter, name: param.name };
  });
}
