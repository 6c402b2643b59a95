// The SQLite connection config: what an owner may write, and what is refused at creation, with
// messages that never repeat the path (a caller may see them).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isConnectorError, parseConnectorConfig } from '@quarry/sdk-connector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_MAX_FILE_BYTES, MAX_FILE_BYTES_LIMIT, sqliteConfigSchema } from '../src/sqlite-config.js';
import { sqlitePlugin } from '../src/sqlite-plugin.js';
import { tempDir, writeSqliteFile } from './sqlite-files.js';

const dir = await tempDir('quarry-sqlite-config-');
const database = join(dir.dir, 'shop.sqlite');

beforeAll(async () => {
  await writeSqliteFile(database, ['CREATE TABLE t (x INTEGER)', 'INSERT INTO t VALUES (1)']);
  await writeFile(join(dir.dir, 'notes.txt'), 'these are not the rows you are looking for');
  await writeFile(join(dir.dir, 'empty.sqlite'), '');
  await mkdir(join(dir.dir, 'folder.sqlite'));
});

afterAll(() => dir.remove());

/** The problems parseConnectorConfig lists for `raw`, as `param: message`. */
function problems(raw: unknown): string[] {
  try {
    parseConnectorConfig(sqlitePlugin, raw);
  } catch (error) {
    if (!isConnectorError(error, 'CONFIG_INVALID')) throw error;
    for (const detail of error.details) expect(detail.message).not.toContain(dir.dir);
    return error.details.map((d) => `${d.param}: ${d.message}`);
  }
  return [];
}

describe('sqlite config', () => {
  it('accepts an absolute path to a SQLite file and fills in the default maxFileBytes', () => {
    expect(parseConnectorConfig(sqlitePlugin, { path: database })).toEqual({
      path: database,
      maxFileBytes: DEFAULT_MAX_FILE_BYTES,
    });
    expect(parseConnectorConfig(sqlitePlugin, { path: database, maxFileBytes: 1_000_000 })).toEqual({
      path: database,
      maxFileBytes: 1_000_000,
    });
  });

  it("declares that it reads the gateway host's own files (owners need the operator's opt-in)", () => {
    expect(sqlitePlugin.hostAccess?.(parseConnectorConfig(sqlitePlugin, { path: database }))).toEqual([
      'files',
    ]);
  });

  it('refuses a relative path, a missing file, a directory and files that are not SQLite databases', () => {
    expect(problems({ path: 'shop.sqlite' })).toEqual(['path: must be an absolute path']);
    expect(problems({ path: join(dir.dir, 'missing.sqlite') })).toEqual([
      'path: no file exists at this path',
    ]);
    expect(problems({ path: join(dir.dir, 'folder.sqlite') })).toEqual(['path: is not a regular file']);
    for (const file of ['notes.txt', 'empty.sqlite']) {
      expect(problems({ path: join(dir.dir, file) })).toEqual([
        'path: is not a SQLite 3 database (it does not start with "SQLite format 3")',
      ]);
    }
  });

  it('refuses a file over maxFileBytes, and maxFileBytes outside 1 byte to 1 GiB', () => {
    const [problem] = problems({ path: database, maxFileBytes: 100 });
    expect(problem).toMatch(/^path: the file is \d+ bytes, over maxFileBytes \(100\)$/);
    expect(problems({ path: database, maxFileBytes: 0 })).toHaveLength(1);
    expect(problems({ path: database, maxFileBytes: MAX_FILE_BYTES_LIMIT + 1 })).toHaveLength(1);
    expect(problems({ path: database, maxFileBytes: 1.5 })).toHaveLength(1);
  });

  it('refuses unknown fields and a missing path, listing every problem', () => {
    expect(problems({ path: database, readOnly: false })).toHaveLength(1);
    expect(problems({})).toEqual([expect.stringMatching(/^path: /)]);
  });

  it('describes itself in JSON Schema for GET /v1/connectors: path required, no secrets', () => {
    const schema = z.toJSONSchema(sqliteConfigSchema, { io: 'input', unrepresentable: 'any' }) as {
      required: string[];
      additionalProperties: boolean;
      properties: Record<string, { type: string; description: string; default?: number }>;
    };
    expect(schema.required).toEqual(['path']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.path).toMatchObject({
      type: 'string',
      description: expect.stringContaining('SQLite'),
    });
    expect(schema.properties.maxFileBytes).toMatchObject({
      type: 'integer',
      default: DEFAULT_MAX_FILE_BYTES,
    });
  });
});
