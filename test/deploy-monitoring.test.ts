// The monitoring that ships in deploy/ (docs/deploy.md, "What to monitor"): the Prometheus alert
// rules and the Grafana dashboard. Both are linted with promtool (the rules with `check rules`
// and their unit tests with `test rules`; the dashboard's queries as recording rules, so a typo
// in PromQL fails here rather than on the operator's screen), and every metric they name must be
// one a gateway's /metrics exports: a renamed metric cannot leave a silent panel or a dead alert.
// Every alert needs unit cases in quarry-alerts.test.yml: one where it fires, one where a near
// miss (below its threshold, or not for its `for:`) leaves it quiet.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createGateway, loadConfig } from '@quarry/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/gateway-process.js';
import { serviceUp } from './support/test-services.js';

const run = promisify(execFile);
const ALERTS = join(REPO_ROOT, 'deploy/prometheus/quarry-alerts.yml');
const ALERT_TESTS = join(REPO_ROOT, 'deploy/prometheus/quarry-alerts.test.yml');
const DASHBOARD = join(REPO_ROOT, 'deploy/grafana/quarry-dashboard.json');

async function promtoolAvailable(): Promise<true | string> {
  try {
    await run('promtool', ['--version']);
    return true;
  } catch (error) {
    return `promtool is not installed (${(error as Error).message}); .ci/run installs Debian's prometheus`;
  }
}
const promtool = serviceUp(await promtoolAvailable());

/** Every `expr:` of a Prometheus rules file (one line, or a `|` block). */
export function ruleExpressions(yaml: string): string[] {
  const lines = yaml.split('\n');
  const exprs: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const match = /^(\s*)expr:\s*(.*)$/.exec(lines[i] as string);
    if (match === null) continue;
    const indent = (match[1] as string).length;
    if (match[2] !== '|') {
      exprs.push(match[2] as string);
      continue;
    }
    const block: string[] = [];
    while (i + 1 < lines.length && /^\s*$|^\s+/.test(lines[i + 1] as string)) {
      const next = lines[i + 1] as string;
      if (next.trim() !== '' && next.length - next.trimStart().length <= indent) break;
      block.push(next.trim());
      i++;
    }
    exprs.push(block.join(' '));
  }
  return exprs;
}

/** The alert names a Prometheus rules file defines (`- alert: Name`). */
export function alertNames(yaml: string): string[] {
  return [...yaml.matchAll(/^\s*- alert:\s*(\S+)\s*$/gm)].map((m) => m[1] as string);
}

/**
 * The `alert_rule_test` cases of a promtool unit-test file, per alert: how many expect it to fire
 * (`exp_alerts` lists an alert) and how many expect it quiet (`exp_alerts: []`, or none given).
 */
export function alertCases(yaml: string): Map<string, { fires: number; quiet: number }> {
  const cases = new Map<string, { fires: number; quiet: number }>();
  // Each case is a list item opening with `eval_time:` or `alertname:`; it ends at the next case
  // or at the next test group (`- interval:` / `- input_series:`).
  const items = yaml.split(/^\s*- (?=eval_time:|alertname:)/m).slice(1);
  for (const raw of items) {
    const item = raw.split(/^\s*- (?=interval:|input_series:)/m)[0] as string;
    const name = /(?:^|\n)\s*alertname:\s*(\S+)/.exec(item)?.[1];
    if (name === undefined) continue;
    const counts = cases.get(name) ?? { fires: 0, quiet: 0 };
    if (/exp_alerts:[ \t]*\n\s*- /.test(item)) counts.fires++;
    else if (/exp_alerts:\s*\[\s*\]/.test(item) || !/exp_alerts:/.test(item)) counts.quiet++;
    cases.set(name, counts);
  }
  return cases;
}

// PromQL's own words: functions, aggregations, keywords.
const PROMQL_WORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
]);

/** The metric names a PromQL expression reads (functions, labels, keywords and strings left out). */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // strings
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // ranges
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ''); // label lists
  const names = new Set<string>();
  for (const m of stripped.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(\s*\()?/g)) {
    const [, name, call] = m;
    if (call !== undefined || PROMQL_WORDS.has(name as string) || /^\d/.test(name as string)) continue;
    names.add(name as string);
  }
  return [...names];
}

interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly gridPos: { readonly h: number; readonly w: number; readonly x: number; readonly y: number };
  readonly targets: readonly { readonly refId: string; readonly expr: string }[];
}

/** A dashboard query as Prometheus would get it from Grafana. */
const asPromql = (expr: string) => expr.replaceAll('$__rate_interval', '5m').replaceAll('$instance', '.*');

describe('deploy/ monitoring', () => {
  let exported: Map<string, string>;
  let dashboard: { panels: readonly Panel[]; templating: { list: readonly { name: string }[] } };
  let alerts: string;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quarry-monitoring-'));
    alerts = await readFile(ALERTS, 'utf8');
    dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8'));
    // A gateway as an operator runs it: its /metrics, read with the operator token.
    const token = randomBytes(18).toString('base64url');
    const gateway = await createGateway(
      loadConfig({
        QUARRY_DATA_DIR: dir,
        QUARRY_DEMO: 'false',
        QUARRY_ADMIN_TOKEN: token,
        QUARRY_LOG_LEVEL: 'silent',
        QUARRY_ACCESS_LOG: 'off',
      }),
    );
    try {
      const res = await gateway.app.request('/metrics', { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      exported = new Map(
        [...(await res.text()).matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [
          m[1] as string,
          m[2] as string,
        ]),
      );
    } finally {
      await gateway.close();
    }
  });
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  /** Whether the gateway exports `name` (a histogram's _bucket, _sum and _count included). */
  const isExported = (name: string) => {
    if (exported.has(name)) return true;
    const base = name.replace(/_(bucket|sum|count)$/, '');
    return base !== name && exported.get(base) === 'histogram';
  };

  it('the alert rules read only metrics the gateway exports (and Prometheus’s own `up`)', () => {
    const exprs = ruleExpressions(alerts);
    expect(exprs.length).toBeGreaterThanOrEqual(10);
    const used = new Set(exprs.flatMap(metricNames));
    used.delete('up');
    expect([...used].filter((name) => !name.startsWith('quarry_'))).toEqual([]);
    expect([...used].filter((name) => !isExported(name))).toEqual([]);
    // What issue 37 asked to see is alerted on.
    for (const name of ['quarry_rate_limiter_fallback', 'quarry_store_errors_total', 'quarry_build_info'])
      expect(used).toContain(name);
  });

  it('the dashboard reads only metrics the gateway exports', () => {
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
    const used = new Set(exprs.flatMap(metricNames));
    expect(used.size).toBeGreaterThanOrEqual(15);
    expect([...used].filter((name) => !isExported(name))).toEqual([]);
    for (const name of [
      'quarry_rate_limited_total',
      'quarry_client_aborts_total',
      'quarry_store_pool_connections',
    ])
      expect(used).toContain(name);
  });

  it('the dashboard is well formed: unique panel ids, a query per target, on the datasource variable', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(
      expect.arrayContaining(['datasource', 'instance']),
    );
    for (const panel of dashboard.panels) {
      expect(panel.title.length).toBeGreaterThan(0);
      expect(panel.gridPos.w).toBeGreaterThan(0);
      expect(panel.targets.length).toBeGreaterThan(0);
      for (const target of panel.targets) expect(target.expr).toMatch(/quarry_/);
    }
  });

  it('every alert has a promtool case that fires it and one where it stays quiet', async () => {
    const names = alertNames(alerts);
    expect(names.length).toBeGreaterThanOrEqual(10);
    const cases = alertCases(await readFile(ALERT_TESTS, 'utf8'));
    // quarry-alerts.test.yml: a case where each alert fires, one where a near miss leaves it quiet,
    // and none for an alert the rules do not define.
    expect({
      neverFires: names.filter((name) => (cases.get(name)?.fires ?? 0) === 0),
      neverQuiet: names.filter((name) => (cases.get(name)?.quiet ?? 0) === 0),
      notARule: [...cases.keys()].filter((name) => !names.includes(name)),
    }).toEqual({ neverFires: [], neverQuiet: [], notARule: [] });
  });

  it('every runbook an alert names is a section of docs/deploy.md', async () => {
    const guide = await readFile(join(REPO_ROOT, 'docs/deploy.md'), 'utf8');
    const anchors = new Set(
      [...guide.matchAll(/^#+ (.+)$/gm)].map((m) =>
        (m[1] as string)
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    const runbooks = [...alerts.matchAll(/runbook: "([^"]+)"/g)].map((m) => m[1] as string);
    expect(runbooks.length).toBeGreaterThan(0);
    for (const runbook of runbooks) {
      const [file, anchor] = runbook.split('#');
      await readFile(join(REPO_ROOT, file as string), 'utf8');
      if (anchor !== undefined) expect(anchors, runbook).toContain(anchor);
    }
  });

  it.runIf(promtool)(
    'promtool accepts the rules, their unit tests pass, and the dashboard’s PromQL parses',
    async () => {
      const checked = await run('promtool', ['check', 'rules', ALERTS]);
      expect(checked.stdout).toMatch(/SUCCESS: \d+ rules found/);
      const tested = await run('promtool', ['test', 'rules', ALERT_TESTS]);
      expect(tested.stdout).toContain('SUCCESS');
      const recording = dashboard.panels.flatMap((p) =>
        p.targets.map(
          (t) =>
            `      - record: dashboard:panel_${p.id}_${t.refId}\n        expr: ${JSON.stringify(asPromql(t.expr))}`,
        ),
      );
      const file = join(dir, 'dashboard-queries.yml');
      await writeFile(file, `groups:\n  - name: dashboard\n    rules:\n${recording.join('\n')}\n`);
      const parsed = await run('promtool', ['check', 'rules', file]);
      expect(parsed.stdout).toContain(`SUCCESS: ${recording.length} rules found`);
    },
  );
});
