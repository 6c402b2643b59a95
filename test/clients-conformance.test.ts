// The official clients held to one conformance suite (issue 20): the cases of
// clients/conformance/cases/ run against ONE real gateway process (embedded defaults, seeded
// here with fixture analytics, accounts and credentials) through the scenario proxy, by
// @quarry/client in this process and by the Python, Go, PHP and Ruby clients' own test runners,
// each in its own process with its own accounts, all at the same time.
// A missing toolchain skips its language with a loud message, except under CI=true, where it fails.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConformanceCases } from './support/conformance/conformance-cases.js';
import {
  conformanceGatewayEnv,
  createRunnerFixture,
  deployFixtureAnalytics,
  type RunnerFixture,
} from './support/conformance/conformance-fixture.js';
import {
  languageSuites,
  missingTools,
  passedCases,
  runSuite,
  type SuiteRun,
  summaryOf,
} from './support/conformance/language-suites.js';
import { type ScenarioProxy, startScenarioProxy } from './support/conformance/scenario-proxy.js';
import { runTypeScriptCase } from './support/conformance/typescript-runner.js';
import { type GatewayProcess, startGateway } from './support/gateway-process.js';

const CI = process.env.CI === 'true';
const SUITE_TIMEOUT_MS = 90_000;
const cases = loadConformanceCases();
const suites = languageSuites().map((suite) => ({ suite, missing: missingTools(suite) }));
for (const { suite, missing } of suites) {
  if (missing.length > 0 && !CI) {
    console.warn(
      `\n!!! clients-conformance: SKIPPING the ${suite.runner} client: ${missing.join(', ')} not on PATH ` +
        '(apt-get install -y golang-go php-cli phpunit ruby; under CI=true this fails) !!!\n',
    );
  }
}

let dir: string | undefined;
let gateway: GatewayProcess | undefined;
let proxy: ScenarioProxy | undefined;
let typescriptFixture: RunnerFixture;
const runs = new Map<string, Promise<SuiteRun>>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-e2e-clients-'));
  await mkdir(join(dir, 'data'));
  const adminToken = randomBytes(24).toString('hex');
  gateway = await startGateway({
    env: conformanceGatewayEnv(join(dir, 'data'), adminToken),
    readyTimeoutMs: 90_000,
  });
  proxy = await startScenarioProxy(gateway.url, cases);
  const suffix = randomBytes(4).toString('hex');
  const ownerKey = await deployFixtureAnalytics(gateway.url, adminToken, suffix);
  typescriptFixture = await createRunnerFixture(
    gateway.url,
    adminToken,
    proxy.url,
    'typescript',
    suffix,
    ownerKey,
  );
  // Every language suite starts now and runs alongside the TypeScript cases below.
  for (const { suite, missing } of suites) {
    if (missing.length > 0) continue;
    const fixture = await createRunnerFixture(
      gateway.url,
      adminToken,
      proxy.url,
      suite.runner,
      suffix,
      ownerKey,
    );
    runs.set(suite.runner, runSuite(suite, JSON.stringify(fixture), SUITE_TIMEOUT_MS));
  }
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(runs.values());
  await proxy?.close();
  await gateway?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 30_000);

describe('the TypeScript client (@quarry/client) passes every conformance case', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const problems = await runTypeScriptCase(typescriptFixture, c);
    expect(problems, `${c.name}: ${c.description}`).toEqual([]);
  });
});

describe.each(suites.map(({ suite, missing }) => [suite.runner, missing] as const))(
  'the %s client',
  (runner, missing) => {
    it.skipIf(missing.length > 0 && !CI)(
      'passes its own test suite and every conformance case',
      async () => {
        expect(missing, `${runner}: toolchain missing under CI=true (.ci/run installs it)`).toEqual([]);
        const run = await runs.get(runner);
        expect(run, `${runner}: the suite was never started`).toBeDefined();
        const { code, output, seconds } = run as SuiteRun;
        console.log(
          `clients-conformance: ${runner} suite exited ${code} after ${seconds.toFixed(1)} s: ${summaryOf(output)}`,
        );
        const tail = output.length > 12_000 ? `…${output.slice(-12_000)}` : output;
        expect(code, `${runner} test output:\n${tail}`).toBe(0);
        const passed = passedCases(output);
        const notPassed = cases.map((c) => c.name).filter((name) => !passed.has(name));
        expect(notPassed, `${runner}: cases not reported as passed\n${tail}`).toEqual([]);
      },
      SUITE_TIMEOUT_MS + 10_000,
    );
  },
);
