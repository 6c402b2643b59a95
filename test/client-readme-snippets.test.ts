// The client READMEs' examples run as written. Each fenced block whose info string ends in
// ` run` (```python run, ```go run, ```php run, ```ruby run, ```ts run) is a whole program: it is
// taken out of its README and run with the language's real toolchain against a real gateway (the
// demo: embedded store, the example analytics on a seeded DuckDB warehouse), with QUARRY_URL and
// QUARRY_API_KEY set (the demo account's key, with the `owner` scope: the account owns the
// `demo` connection and the example analytics, so the owner examples deploy on it). A block that
// exits non-zero, prints nothing, or never shows the error handling it documents (an
// INVALID_PARAMS with its request id) fails. A block marked ```sh install``` (Go's) is run first,
// in the program's folder, with `/path/to/quarry` read as this checkout. A missing toolchain
// skips its language with a loud message, except under CI=true, where it fails (as in
// test/clients-conformance.test.ts). docs/embedding.md's blocks marked the same way run too, one
// per client: each mints an embed token fixing a region and queries with it.
import { execFile, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { seedDemoWarehouse } from '@quarry/examples';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { languageSuites } from './support/conformance/language-suites.js';
import { type GatewayProcess, REPO_ROOT, startGateway } from './support/gateway-process.js';

const CI = process.env.CI === 'true';
const run = promisify(execFile);

interface Block {
  readonly info: string;
  readonly code: string;
}

/** The fenced blocks of a Markdown text, with their info strings. */
export function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const fence = /^```([^\n`]*)\n([\s\S]*?)^```\s*$/gm;
  for (const match of markdown.matchAll(fence)) {
    blocks.push({ info: (match[1] ?? '').trim(), code: match[2] ?? '' });
  }
  return blocks;
}

interface Language {
  readonly name: string;
  readonly readme: string;
  /** The info string of its runnable blocks. */
  readonly marker: string;
  readonly needs: readonly string[];
  /** Writes `code` in `dir` and runs it; resolves with what it printed. */
  run(code: string, dir: string, env: Record<string, string>, install: readonly string[]): Promise<string>;
}

const goEnv = languageSuites().find((s) => s.runner === 'go')?.env ?? {};

const LANGUAGES: readonly Language[] = [
  {
    name: 'python',
    readme: 'clients/python/README.md',
    marker: 'python run',
    needs: ['python3'],
    async run(code, dir, env) {
      await writeFile(join(dir, 'snippet.py'), code);
      const pythonPath = join(REPO_ROOT, 'clients/python/src');
      return output(run('python3', ['snippet.py'], { cwd: dir, env: { ...env, PYTHONPATH: pythonPath } }));
    },
  },
  {
    name: 'go',
    readme: 'clients/go/README.md',
    marker: 'go run',
    needs: ['go'],
    async run(code, dir, env, install) {
      await writeFile(join(dir, 'main.go'), code);
      const goEnvironment = { ...env, ...goEnv };
      // The README's own install lines, with the checkout's path.
      for (const line of install) {
        await run('sh', ['-c', line.replaceAll('/path/to/quarry', REPO_ROOT)], {
          cwd: dir,
          env: goEnvironment,
        });
      }
      return output(run('go', ['run', '.'], { cwd: dir, env: goEnvironment }));
    },
  },
  {
    name: 'php',
    readme: 'clients/php/README.md',
    marker: 'php run',
    needs: ['php'],
    async run(code, dir, env) {
      // What `composer require` leaves: vendor/autoload.php with the client's PSR-4 map.
      await mkdir(join(dir, 'vendor'));
      await writeFile(
        join(dir, 'vendor', 'autoload.php'),
        `<?php\nspl_autoload_register(static function (string $class): void {\n` +
          `    if (str_starts_with($class, 'Quarry\\\\')) {\n` +
          `        $file = ${JSON.stringify(join(REPO_ROOT, 'clients/php/src'))} . '/' . str_replace('\\\\', '/', substr($class, 7)) . '.php';\n` +
          `        if (is_file($file)) { require $file; }\n    }\n});\n`,
      );
      await writeFile(join(dir, 'snippet.php'), code);
      return output(run('php', ['snippet.php'], { cwd: dir, env }));
    },
  },
  {
    name: 'ruby',
    readme: 'clients/ruby/README.md',
    marker: 'ruby run',
    needs: ['ruby'],
    async run(code, dir, env) {
      await writeFile(join(dir, 'snippet.rb'), code);
      return output(
        run('ruby', ['-I', join(REPO_ROOT, 'clients/ruby/lib'), 'snippet.rb'], { cwd: dir, env }),
      );
    },
  },
  {
    name: 'typescript',
    readme: 'client/README.md',
    marker: 'ts run',
    needs: ['node'],
    async run(code, dir, env) {
      // `@quarry/client` as installed: the workspace's node_modules, its TypeScript sources.
      await symlink(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
      await writeFile(join(dir, 'snippet.mts'), code);
      return output(
        run(process.execPath, ['--import', 'tsx', '--conditions=@quarry/source', 'snippet.mts'], {
          cwd: dir,
          env,
        }),
      );
    },
  },
];

/** What a program printed (stdout, then stderr); a failure carries both in its message. */
async function output(pending: Promise<{ stdout: string; stderr: string }>): Promise<string> {
  try {
    const { stdout, stderr } = await pending;
    return `${stdout}${stderr}`;
  } catch (error) {
    const e = error as { message: string; stdout?: string; stderr?: string };
    throw new Error(`${e.message}\n--- stdout\n${e.stdout ?? ''}\n--- stderr\n${e.stderr ?? ''}`);
  }
}

const languages = LANGUAGES.map((language) => ({
  language,
  missing: language.needs.filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0),
}));
for (const { language, missing } of languages) {
  if (missing.length > 0 && !CI) {
    console.warn(
      `\n!!! client-readme-snippets: SKIPPING the ${language.name} README: ${missing.join(', ')} not on PATH (under CI=true this fails) !!!\n`,
    );
  }
}

let dir: string;
let gateway: GatewayProcess | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-readme-snippets-'));
  const dataDir = join(dir, 'data');
  await mkdir(dataDir);
  await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 3000 });
  gateway = await startGateway({
    env: { QUARRY_DATA_DIR: dataDir, QUARRY_DEMO: 'true', QUARRY_LOG_LEVEL: 'warn' },
    readyTimeoutMs: 90_000,
  });
  const key = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
  env = {
    PATH: process.env.PATH ?? '',
    HOME: join(dir, 'home'),
    QUARRY_URL: gateway.url,
    QUARRY_API_KEY: key,
  };
  await mkdir(env.HOME as string);
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 30_000);

describe('fencedBlocks', () => {
  it('finds blocks and their info strings', () => {
    const blocks = fencedBlocks('text\n```go run\npackage main\n```\n\n```sh\necho hi\n```\n');
    expect(blocks).toEqual([
      { info: 'go run', code: 'package main\n' },
      { info: 'sh', code: 'echo hi\n' },
    ]);
  });
});

describe.each(languages.map(({ language, missing }) => [language.name, language, missing] as const))(
  'the %s client README',
  (_name, language, missing) => {
    it.skipIf(missing.length > 0 && !CI)(
      'runs every block marked runnable against a gateway',
      async () => {
        expect(missing, `${language.name}: toolchain missing under CI=true`).toEqual([]);
        const blocks = fencedBlocks(await readFile(join(REPO_ROOT, language.readme), 'utf8'));
        const runnable = blocks.filter((b) => b.info === language.marker);
        expect(runnable.length, `${language.readme} has no \`\`\`${language.marker} block`).toBeGreaterThan(
          0,
        );
        const install = blocks
          .filter((b) => b.info === 'sh install')
          .flatMap((b) => b.code.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#')));
        const printed: string[] = [];
        for (const [i, block] of runnable.entries()) {
          const programDir = join(dir, `${language.name}-${i}`);
          await mkdir(programDir);
          const out = await language.run(block.code, programDir, env, install);
          expect(out.trim(), `${language.readme} block ${i + 1} printed nothing`).not.toBe('');
          printed.push(out);
        }
        console.log(`client-readme-snippets: ${language.readme} printed:\n${printed.join('\n')}`);
        // The error handling each README shows really ran: a refused param, with its request id.
        expect(printed.join('\n'), `${language.readme}: no INVALID_PARAMS with its request id`).toMatch(
          /INVALID_PARAMS[^\n]*req_[0-9a-z]+/,
        );
      },
      180_000,
    );

    // docs/embedding.md shows each client minting an embed token on a server and a page calling
    // with it: its blocks marked as this README's run the same way, and the token sees EU only.
    it.skipIf(missing.length > 0 && !CI)(
      "runs docs/embedding.md's block for this client: a minted token sees its fixed region only",
      async () => {
        expect(missing, `${language.name}: toolchain missing under CI=true`).toEqual([]);
        const blocks = fencedBlocks(await readFile(join(REPO_ROOT, 'docs/embedding.md'), 'utf8'));
        const runnable = blocks.filter((b) => b.info === language.marker);
        expect(runnable.length, `docs/embedding.md has no \`\`\`${language.marker} block`).toBe(1);
        const install = fencedBlocks(await readFile(join(REPO_ROOT, language.readme), 'utf8'))
          .filter((b) => b.info === 'sh install')
          .flatMap((b) => b.code.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#')));
        const programDir = join(dir, `${language.name}-embedding`);
        await mkdir(programDir);
        const out = await language.run((runnable[0] as Block).code, programDir, env, install);
        console.log(`client-readme-snippets: docs/embedding.md (${language.name}) printed:\n${out}`);
        expect(out).toMatch(/^token \S+, expires \S+$/m);
        expect(out).toMatch(/^regions: EU$/m);
      },
      180_000,
    );
  },
);
