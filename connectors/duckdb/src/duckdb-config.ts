// The DuckDB connection config an owner writes, validated once when the connection is created.
// A connection is either a database file (opened read-only) or `:memory:` plus `files`: views
// over Parquet/CSV/JSON files for owners who have files rather than a warehouse.
import { fieldUi } from '@quarry/sdk-connector';
import { z } from 'zod';

/** File extensions a `files` entry may end with, and the DuckDB reader each one uses. */
const READERS: readonly (readonly [RegExp, string])[] = [
  [/\.parquet$/i, 'read_parquet'],
  [/\.(csv|tsv)(\.gz|\.zst)?$/i, 'read_csv_auto'],
  [/\.(json|ndjson|jsonl)(\.gz|\.zst)?$/i, 'read_json_auto'],
];

/** The DuckDB table function that reads `path` (by extension), or undefined when unsupported. */
export function readerFor(path: string): string | undefined {
  for (const [pattern, reader] of READERS) if (pattern.test(path)) return reader;
  return undefined;
}

const VIEW_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Validates a DuckDB connection config. */
export const duckdbConfigSchema = z
  .object({
    /** A database file (opened READ_ONLY), or `:memory:` for a connection made only of `files`. */
    path: fieldUi(z.string().min(1), {
      label: 'Database file',
      help: 'A DuckDB file on the gateway host, opened read-only; or :memory: for a connection made only of files.',
      placeholder: '/data/warehouse.duckdb',
      order: 1,
    }),
    /** View name → a file path or glob of Parquet, CSV or JSON files. */
    files: fieldUi(
      z.record(
        z.string().regex(VIEW_NAME, 'a view name is a plain SQL identifier'),
        z
          .string()
          .min(1)
          .refine(
            (p) => readerFor(p) !== undefined,
            'files must end in .parquet, .csv, .tsv, .json, .ndjson or .jsonl',
          ),
      ),
      {
        label: 'Files as tables',
        help: 'One per line: a table name, =, then a Parquet, CSV or JSON file path or glob on the gateway host.',
        placeholder: 'orders = /data/orders/*.parquet',
        input: 'map',
        order: 2,
      },
    ).optional(),
    /** DuckDB worker threads for this connection (default: DuckDB's, the number of cores). */
    threads: fieldUi(z.number().int().min(1).max(1024), {
      label: 'Threads',
      help: "DuckDB worker threads for this connection (default: DuckDB's, the number of cores).",
      advanced: true,
      order: 10,
    }).optional(),
    /** DuckDB's memory cap for this connection, e.g. `512MB` or `2GB`. */
    memoryLimit: fieldUi(
      z.string().regex(/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, 'e.g. 512MB or 2GB'),
      {
        label: 'Memory limit',
        help: "DuckDB's memory cap for this connection.",
        placeholder: '2GB',
        advanced: true,
        order: 11,
      },
    ).optional(),
    /**
     * Extra directories queries may read files from (e.g. Parquet files that views inside the
     * database file read). Everything else on the host is off limits to the owner's SQL.
     */
    allowedDirectories: fieldUi(z.array(z.string().min(1)), {
      label: 'Other readable directories',
      help: 'One per line: directories on the gateway host that queries may read files from (e.g. Parquet files the database views read). Everything else is off limits.',
      placeholder: '/data/parquet',
      input: 'list',
      advanced: true,
      order: 12,
    }).optional(),
  })
  .strict();

/** A validated DuckDB connection config. */
export type DuckdbConfig = z.output<typeof duckdbConfigSchema>;

/** The gateway host's files and directories a config reads (none for a bare `:memory:`). */
export function duckdbHostPaths(config: DuckdbConfig): string[] {
  return [
    ...(config.path === ':memory:' ? [] : [config.path]),
    ...Object.values(config.files ?? {}),
    ...(config.allowedDirectories ?? []),
  ];
}
