// Named-parameter templates. Implementation owner: the template helper.
// Public API (to be implemented in this file):
//   parseTemplate(sql, dialect?) → SqlTemplate     (scan once; `:name` outside strings, comments,
//                                                  quoted identifiers and `::` casts)
//   compileTemplate(template, dialect, params)      → CompiledQuery
export interface SqlTemplate {
  /** The original SQL text. */
  readonly sql: string;
  /** Distinct parameter names in order of first use. */
  readonly names: readonly string[];
}
