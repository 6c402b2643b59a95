// The served OpenAPI document is one a generator can use: Redocly's linter (its recommended
// rules, as @redocly/cli runs them) finds no error and no warning in it, and the types
// openapi-typescript generates from it fit the TypeScript client's own.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type TestGateway } from '../testing/test-gateway.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const REDOCLY = join(ROOT, 'node_modules/.bin/redocly');
const TSC = join(ROOT, 'node_modules/.bin/tsc');

let tg: TestGateway;
let dir: string;

beforeAll(async () => {
  // With the operator API on, so its operations are linted too.
  tg = await createTestGateway({ QUARRY_ADMIN_TOKEN: 'operator-token-0123456789' });
  dir = await mkdtemp(join(tmpdir(), 'quarry-openapi-'));
});
afterAll(async () => {
  await tg?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Problem {
  readonly ruleId: string;
  readonly severity: 'error' | 'warn';
  readonly message: string;
  readonly location: readonly { readonly pointer: string }[];
}

describe('the OpenAPI document', () => {
  it('passes redocly lint (recommended rules) with no error and no warning', async () => {
    const doc = (await tg.call('GET', '/v1/openapi.json')).json;
    const file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(doc));
    const { stdout } = await run(
      REDOCLY,
      ['lint', file, '--format=json', `--config=${join(ROOT, 'redocly.yaml')}`],
      {
        maxBuffer: 16 * 1024 * 1024,
      },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const report = JSON.parse(stdout) as { problems: Problem[] };
    const problems = report.problems.map(
      (p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`,
    );
    expect(problems).toEqual([]);
  });

  it('names every operation, and says which are public', async () => {
    const doc = (await tg.call('GET', '/v1/openapi.json')).json;
    const operations = Object.values(
      doc.paths as Record<string, Record<string, Record<string, unknown>>>,
    ).flatMap((item) => Object.values(item));
    expect(operations.length).toBeGreaterThan(40);
    const ids = operations.map((op) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operations.every((op) => Array.isArray(op.security))).toBe(true);
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    expect(doc.paths['/v1/query'].post.security).toEqual([{ bearerAuth: [] }]);
    // redocly.yaml turns operation-4xx-response off for the operations without input or
    // credential; every other one documents its 4xx answers.
    const needs4xx = operations.filter(
      (op) =>
        (op.security as unknown[]).length > 0 || op.parameters !== undefined || op.requestBody !== undefined,
    );
    expect(needs4xx.length).toBeGreaterThan(35);
    for (const op of needs4xx) {
      expect(
        Object.keys(op.responses as object).some((status) => status.startsWith('4')),
        String(op.operationId),
      ).toBe(true);
    }
  });
});

describe('types generated from the document', () => {
  it("fit the TypeScript client's types: every documented answer is one the client reads", async () => {
    const doc = (await tg.call('GET', '/v1/openapi.json')).json;
    await writeFile(join(dir, 'generated.ts'), astToString(await openapiTS(doc)));
    const client = join(ROOT, 'client/src/types.js');
    // Each documented answer must be assignable to the client's type of it: a field the client
    // requires and the document does not promise, or a type that differs, fails to compile.
    await writeFile(
      join(dir, 'check.ts'),
      [
        `import type { ApiKey, IssuedApiKey, QueryResult, Statement, Usage } from '${client}';`,
        `import type { components } from './generated.js';`,
        `type S = components['schemas'];`,
        'export const fits = (s: {',
        `  query: S['QueryResponse']; usage: S['Usage']; statement: S['OwnerStatement'];`,
        `  key: S['ApiKey']; issued: S['IssuedApiKey'];`,
        '}): [QueryResult, Usage, Statement, ApiKey, IssuedApiKey] => [s.query, s.usage, s.statement, s.key, s.issued];',
        '',
      ].join('\n'),
    );
    const compiled = await run(
      TSC,
      [
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        'check.ts',
      ],
      { cwd: dir },
    )
      .then(() => '')
      .catch((error: { stdout?: string }) => error.stdout ?? 'tsc failed');
    expect(compiled).toBe('');
  }, 60_000);

  it('reads as a caller meets it in /docs: caller groups first, the API key first, examples that answer 200', async () => {
    const doc = (await tg.call('GET', '/v1/openapi.json')).json;
    const tags = (doc.tags as { name: string }[]).map((t) => t.name);
    expect(tags.slice(0, 2)).toEqual(['Query', 'Marketplace']);
    expect(tags.at(-1)).toBe('Operator');
    // Every operation's group is declared, so none is shown out of order.
    const used = new Set(
      Object.values(doc.paths as Record<string, Record<string, { tags?: string[] }>>).flatMap((ops) =>
        Object.values(ops).flatMap((op) => op.tags ?? []),
      ),
    );
    expect([...used].filter((t) => !tags.includes(t))).toEqual([]);
    expect(Object.keys(doc.components.securitySchemes)[0]).toBe('bearerAuth');
    // "Try it out" sends the request body's example: it is a call that succeeds on the demo data.
    const example = doc.components.schemas.QueryRequest.example;
    const answer = await tg.call('POST', '/v1/query', { key: tg.demoKey, body: example });
    expect(answer.status, answer.text).toBe(200);
  });
});
