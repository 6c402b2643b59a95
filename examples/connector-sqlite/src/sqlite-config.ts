// The SQLite connection config an owner writes, validated once when the connection is created:
// an absolute path to an existing SQLite database file, and how large a file the connector may
// load (every session holds its own copy of the file in memory).
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { fieldUi } from '@quarry/sdk-connector';
import { z } from 'zod';

/** Default `maxFileBytes`: 128 MiB. */
export const DEFAULT_MAX_FILE_BYTES = 128 * 1024 * 1024;
/** The largest `maxFileBytes` an owner may set: 1 GiB (sql.js runs in 32-bit WebAssembly memory). */
export const MAX_FILE_BYTES_LIMIT = 1024 * 1024 * 1024;

/** The 16 bytes every SQLite 3 database file starts with. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\u0000', 'latin1');

/** Why `path` cannot be used, or the size of the readable SQLite file it names. */
function fileProblem(path: string): { readonly problem: string } | { readonly size: number } {
  const stats = statSync(path, { throwIfNoEntry: false });
  if (stats === undefined) return { problem: 'no file exists at this path' };
  if (!stats.isFile()) return { problem: 'is not a regular file' };
  const header = Buffer.alloc(SQLITE_HEADER.length);
  let read = 0;
  try {
    const fd = openSync(path, 'r');
    try {
      read = readSync(fd, header, 0, header.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return { problem: 'the file cannot be read by the gateway' };
  }
  if (read < header.length || !header.equals(SQLITE_HEADER)) {
    return { problem: 'is not a SQLite 3 database (it does not start with "SQLite format 3")' };
  }
  return { size: stats.size };
}

const maxFileBytesSchema = z
  .number()
  .int()
  .min(1)
  .max(MAX_FILE_BYTES_LIMIT)
  .default(DEFAULT_MAX_FILE_BYTES)
  .describe(
    'Largest file the connector loads (default 128 MiB). Every session holds a copy in memory, ' +
      'so a connection can use up to pool max × file size.',
  );

/** Validates a SQLite connection config. Messages never repeat the path (callers may see them). */
export const sqliteConfigSchema = z
  .object({
    path: fieldUi(
      z
        .string()
        .min(1)
        .refine(isAbsolute, 'must be an absolute path')
        .describe(
          'Absolute path of a SQLite 3 database file on the gateway host; it is read, never written.',
        ),
      {
        label: 'Database file',
        help: 'The absolute path of a SQLite 3 file on the gateway host; it is read, never written.',
        placeholder: '/data/shop.sqlite',
        order: 1,
      },
    ),
    maxFileBytes: fieldUi(maxFileBytesSchema, {
      label: 'Largest file (bytes)',
      help: 'Default 128 MiB. Every session holds a copy in memory.',
      advanced: true,
      order: 2,
    }),
  })
  .strict()
  // Runs even when a field has a problem of its own (zod reports those too): check only what is valid.
  .superRefine((config, context) => {
    if (!isAbsolute(config.path)) return;
    const file = fileProblem(config.path);
    if ('problem' in file) {
      context.addIssue({ code: 'custom', path: ['path'], message: file.problem });
    } else if (maxFileBytesSchema.safeParse(config.maxFileBytes).success && file.size > config.maxFileBytes) {
      context.addIssue({
        code: 'custom',
        path: ['path'],
        message: `the file is ${file.size} bytes, over maxFileBytes (${config.maxFileBytes})`,
      });
    }
  });

/** A validated SQLite connection config. */
export type SqliteConfig = z.output<typeof sqliteConfigSchema>;
