// Maps DuckDB's result column types onto the SDK's logical ColumnTypes, which decide how the
// runtime turns each value into JSON.
import type { DuckDBType } from '@duckdb/node-api';
import type { ColumnType } from '@quarry/sdk-connector';
import { DuckDBTypeId } from './duckdb-api.js';

/** The logical column type for a DuckDB type (the JSON alias of VARCHAR counts as `json`). */
export function columnTypeFor(type: DuckDBType): ColumnType {
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return 'boolean';
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
    case DuckDBTypeId.BIGNUM:
      return 'integer';
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
      return 'number';
    case DuckDBTypeId.DECIMAL:
      return 'decimal';
    case DuckDBTypeId.VARCHAR:
      return type.alias?.toUpperCase() === 'JSON' ? 'json' : 'string';
    case DuckDBTypeId.ENUM:
    case DuckDBTypeId.UUID:
      return 'string';
    case DuckDBTypeId.DATE:
      return 'date';
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
    case DuckDBTypeId.TIMESTAMP_TZ:
      return 'timestamp';
    case DuckDBTypeId.TIME:
    case DuckDBTypeId.TIME_TZ:
    case DuckDBTypeId.TIME_NS:
      return 'time';
    case DuckDBTypeId.BLOB:
      return 'bytes';
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY:
      return 'array';
    case DuckDBTypeId.STRUCT:
    case DuckDBTypeId.MAP:
    case DuckDBTypeId.UNION:
    case DuckDBTypeId.VARIANT:
      return 'json';
    default:
      // INTERVAL, BIT, GEOMETRY, SQLNULL, …: rendered as DuckDB's own text.
      return 'unknown';
  }
}
