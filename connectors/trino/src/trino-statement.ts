// Turns a compiled query into the text POSTed to Trino. Trino's HTTP protocol has no parameter
// binding, so values are bound on the server instead: `EXECUTE IMMEDIATE '<sql with ?>' USING
// <literal>, …` (Trino 418+). The SQL text is the owner's template only, quoted as one string
// literal; each value is a typed literal rendered from its validated value by the SDK's
// renderAnsiLiteral, and the server substitutes it for its `?` as a constant, so a value can
// never become SQL. Only queries run: anything that does not start as one is refused here.
import { type CompiledQuery, ConnectorError, renderAnsiLiteral } from '@quarry/sdk-connector';

/** The statement kinds a read-only connection may run; everything else could change data. */
const QUERY_KEYWORDS = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE']);

/** The first keyword of `sql`, after whitespace, comments and opening parentheses (upper-cased). */
export function firstKeyword(sql: string): string {
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    if (c === '(' || c <= ' ') i++;
    else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else break;
  }
  const word = /^[A-Za-z_]+/.exec(sql.slice(i, i + 64));
  return word === null ? '' : word[0].toUpperCase();
}

/**
 * Refuses anything but a query (SELECT, WITH, VALUES, TABLE) with QUERY_FAILED, before it reaches
 * Trino. A Trino query cannot write, and Trino's parser refuses a second statement after `;`.
 * Defence in depth still asks for a Trino user with read-only access control.
 */
export function assertReadOnlyQuery(sql: string): void {
  const keyword = firstKeyword(sql);
  if (!QUERY_KEYWORDS.has(keyword)) {
    throw new ConnectorError(
      'QUERY_FAILED',
      `Trino connections run queries only (SELECT, WITH, VALUES or TABLE), not ${keyword === '' ? 'this statement' : keyword}`,
      { driverCode: 'READ_ONLY' },
    );
  }
}

/** `text` as one Trino string literal (`'` doubled; Trino strings have no other escapes). */
export function quoteTrinoString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The statement to POST for a compiled query: the SQL itself when it has no params, else
 * `EXECUTE IMMEDIATE '<sql>' USING <literal>, …` with one literal per `?`, in order.
 *
 * @throws ConnectorError `QUERY_FAILED` (driverCode `READ_ONLY`) for anything but a query;
 *   `PARAM_INVALID` when a value does not match its declared type.
 */
export function trinoStatement(query: CompiledQuery): string {
  assertReadOnlyQuery(query.sql);
  if (query.params.length === 0) return query.sql;
  const values = query.params.map(renderAnsiLiteral);
  return `EXECUTE IMMEDIATE ${quoteTrinoString(query.sql)} USING ${values.join(', ')}`;
}
