// The first keyword of a statement, past comments, whitespace and opening parentheses: for
// connectors whose engine reports no statement type when it prepares one (MySQL), to tell a
// read from a write before anything runs. Lexical only: engines that can say more (Postgres'
// plan, DuckDB's statement type) should ask the engine.

/**
 * Keywords a read-only statement may start with. `WITH` is included: engines with
 * data-modifying CTEs (Postgres) must look further (their describe asks the planner).
 */
export const READ_ONLY_KEYWORDS: ReadonlySet<string> = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE']);

/**
 * The statement's first keyword in upper case (`''` when there is none), skipping `--` and
 * `/* … *\/` comments, `#` comments when `hashComments` is set (MySQL), whitespace and `(`.
 *
 * @example
 * leadingKeyword('/* report *\/ (SELECT 1)') // 'SELECT'
 * leadingKeyword('delete from t')            // 'DELETE'
 */
export function leadingKeyword(sql: string, options: { readonly hashComments?: boolean } = {}): string {
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === '(' || /\s/.test(c)) {
      i++;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end + 1;
    } else if (c === '#' && options.hashComments) {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else {
      break;
    }
  }
  const word = /^[A-Za-z_]+/.exec(sql.slice(i));
  return word === null ? '' : word[0].toUpperCase();
}
