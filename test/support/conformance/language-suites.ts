// The four language clients' own test suites (clients/<lang>), each run with its ecosystem's test
// runner and the conformance fixture in QUARRY_CONFORMANCE. Every runner prints
// `CONFORMANCE PASS <case>` for each case it passed, so the harness knows the cases really ran.
import { spawn, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../gateway-process.js';

export interface LanguageSuite {
  readonly runner: 'python' | 'go' | 'php' | 'ruby';
  /** Programs that must be on PATH. */
  readonly needs: readonly string[];
  readonly cwd: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

export interface SuiteRun {
  readonly code: number | null;
  readonly output: string;
  readonly seconds: number;
}

const clients = (lang: string) => join(REPO_ROOT, 'clients', lang);

/**
 * Go's caches in one temp dir kept between runs (Go's cache is safe to share, and a warm one
 * saves most of the suite's time): never HOME or the checkout, and no network.
 */
function goEnv(): Record<string, string> {
  const dir = join(tmpdir(), 'quarry-clients-go');
  return {
    GOCACHE: join(dir, 'cache'),
    GOPATH: join(dir, 'path'),
    GOPROXY: 'off',
    GOFLAGS: '',
    GOTOOLCHAIN: 'local',
  };
}

export function languageSuites(): LanguageSuite[] {
  return [
    {
      runner: 'python',
      needs: ['python3'],
      cwd: clients('python'),
      command: 'python3',
      args: ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.', '-v'],
      env: { PYTHONPATH: 'src', PYTHONDONTWRITEBYTECODE: '1' },
    },
    {
      runner: 'go',
      needs: ['go'],
      cwd: clients('go'),
      command: 'go',
      args: ['test', '-count=1', '-v', './...'],
      env: goEnv(),
    },
    { runner: 'php', needs: ['php', 'phpunit'], cwd: clients('php'), command: 'phpunit', args: [] },
    {
      runner: 'ruby',
      needs: ['ruby'],
      cwd: clients('ruby'),
      command: 'ruby',
      args: [
        '-Ilib',
        '-Itest',
        '-e',
        'Dir["test/**/*_test.rb"].sort.each { |f| require File.expand_path(f) }',
        '--',
        '-v',
      ],
    },
  ];
}

/** The programs of `suite` missing from PATH. */
export function missingTools(suite: LanguageSuite): string[] {
  return suite.needs.filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
}

/** Runs one suite to its end (killed after `timeoutMs`), with everything it printed. */
export function runSuite(suite: LanguageSuite, fixtureJson: string, timeoutMs: number): Promise<SuiteRun> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(suite.command, suite.args, {
      cwd: suite.cwd,
      env: { ...process.env, ...suite.env, QUARRY_CONFORMANCE: fixtureJson },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    const timer = setTimeout(() => {
      output += `\n[harness] killed after ${timeoutMs} ms`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => {
      output += `\n[harness] could not start ${suite.command}: ${error.message}`;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output, seconds: (performance.now() - started) / 1000 });
    });
  });
}

/** The case names a run reported as passed. */
export function passedCases(output: string): Set<string> {
  return new Set([...output.matchAll(/^CONFORMANCE PASS (\S+)\s*$/gm)].map((m) => m[1] ?? ''));
}

/** The test runner's own closing lines (unittest, go test, PHPUnit, minitest), for the log. */
export function summaryOf(output: string): string {
  const closing =
    /^(Ran \d+ tests?.*|OK.*|FAILED.*|ok\s+\S+.*|FAIL\s+\S+.*|Tests: \d+.*|OK \(\d+ tests?.*|\d+ runs, .*)$/;
  const lines = output.split('\n').map((line) => line.trim());
  // go test -v has no count of its own: count its verdict lines (subtests included).
  const go = ['PASS', 'FAIL', 'SKIP'].map(
    (v) => `${lines.filter((l) => l.startsWith(`--- ${v}:`)).length} ${v}`,
  );
  const verdicts = lines.some((l) => l.startsWith('--- ')) ? [`go test: ${go.join(', ')}`] : [];
  return [...lines.filter((line) => closing.test(line)), ...verdicts].join(' | ');
}
