// The conformance cases played by @quarry/client, the same way each language's runner plays
// them (clients/conformance/README.md): one client per case (a step's own client settings or
// credential get a client of their own), each step's result or error compared with the case,
// then the proxy's traffic check. Returns the problems found; empty when the case passed.
import * as quarry from '@quarry/client';
import type { ConformanceCase, ErrorExpectation, Step } from './conformance-cases.js';
import type { Credential, RunnerFixture } from './conformance-fixture.js';
import { matchExpected, resolveSaved } from './expected-match.js';

type ClientFor = (step: Step) => quarry.QuarryClient;

function clientFactory(
  fixture: RunnerFixture,
  c: ConformanceCase,
  saved: Record<string, unknown>,
): ClientFor {
  const baseUrl = `${fixture.base_url}/${c.name}`;
  const build = (credential: Credential, settings: { retries?: number; timeout_seconds?: number }) =>
    quarry.createQuarryClient(
      'api_key' in credential
        ? { baseUrl, apiKey: credential.api_key }
        : { baseUrl, oauth: { clientId: credential.client_id, clientSecret: credential.client_secret } },
      {
        timeoutMs: (settings.timeout_seconds ?? 10) * 1000,
        retry: { retries: settings.retries ?? 3 },
      },
    );
  const caseCredential = fixture.credentials[c.credential];
  if (!caseCredential) throw new Error(`the fixture has no credential "${c.credential}"`);
  const shared = build(caseCredential, c.client ?? {});
  return (step) => {
    if (step.client === undefined && step.credential === undefined) return shared;
    const credential: Credential =
      step.credential === undefined
        ? caseCredential
        : { api_key: String(resolveSaved(step.credential, saved)) };
    return build(credential, { ...c.client, ...step.client });
  };
}

/** Every item of an every-page helper (searchAll, listAll), fetched page by page. */
async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
async function perform(client: quarry.QuarryClient, step: Step, baseUrl: string): Promise<unknown> {
  const input = step.input ?? {};
  switch (step.op) {
    case 'query':
      return client.query(
        input.source,
        input.params,
        input.max_credits === undefined ? {} : { maxCredits: input.max_credits },
      );
    case 'analytics.get':
      return client.analytics.get(input.name, input.params);
    case 'keys.create':
      return client.keys.create({ name: input.name, scopes: input.scopes });
    case 'keys.list':
      return client.keys.list();
    case 'keys.revoke':
      return client.keys.revoke(input.id);
    case 'usage':
      return client.usage.get();
    case 'marketplace.searchAll':
      return collect(
        client.marketplace.searchAll({ q: input.q, category: input.category, pageSize: input.page_size }),
      );
    case 'marketplace.search':
      return client.marketplace.search({ q: input.q, category: input.category });
    case 'marketplace.get':
      return client.marketplace.get(input.name);
    case 'marketplace.tryToken':
      return client.marketplace.tryToken(input.source, { ttlSeconds: input.ttl_seconds });
    case 'connections.create':
      return client.connections.create({ name: input.name, type: input.type, config: input.config });
    case 'analytics.deploy':
      return client.analytics.deploy(input.definition);
    case 'listings.publish':
      return client.listings.publish(input.name, input.listing);
    case 'statements.get':
      return client.statements.get({ period: input.period });
    case 'budget.get':
      return client.budget.get();
    case 'budget.set':
      return client.budget.set(input.budget_usd);
    case 'tools.list':
      return client.tools.list();
    case 'tools.add':
      return client.tools.add(input.name);
    case 'tools.remove':
      return client.tools.remove(input.name);
    case 'mcp.get':
      return client.mcp.get();
    case 'mcp.set':
      return client.mcp.set({ maxCredits: input.max_credits });
    case 'embedTokens.create':
      return client.embedTokens.create({
        analytics: input.analytics,
        origins: input.origins,
        expires_in: input.expires_in,
      });
    case 'embedSecrets.create':
      return client.embedSecrets.create(input.name);
    case 'embedSecrets.list':
      return client.embedSecrets.list();
    case 'embedSecrets.rotate':
      return client.embedSecrets.rotate(input.id, { overlapSeconds: input.overlap_seconds });
    case 'embedSecrets.revoke':
      return client.embedSecrets.revoke(input.id);
    case 'cors.get':
      return client.cors.get();
    case 'cors.set':
      return client.cors.set(input.allow_keys_from_browsers);
    case 'account.get':
      return client.account.get();
    case 'account.setPassword':
      return client.account.setPassword(input.password);
    case 'plans.list':
      return client.plans.list();
    case 'billing.get':
      return client.billing.get();
    case 'billing.checkout':
      return client.billing.checkout(input.plan);
    case 'billing.portal':
      return client.billing.portal();
    case 'payouts.onboarding':
      return client.payouts.onboarding();
    case 'payouts.account':
      return client.payouts.account();
    case 'payouts.list':
      return client.payouts.list();
    case 'oauthClients.create':
      return client.oauthClients.create({ name: input.name, scopes: input.scopes });
    case 'oauthClients.list':
      return client.oauthClients.list();
    case 'oauthClients.revoke':
      return client.oauthClients.revoke(input.id);
    case 'connectors.list':
      return (await client.connectors.list()).connectors;
    case 'connections.list':
      return client.connections.list();
    case 'connections.get':
      return client.connections.get(input.id);
    case 'connections.test':
      return client.connections.test(input.id);
    case 'connections.update':
      return client.connections.update(input.id, { config: input.config });
    case 'connections.delete':
      return client.connections.delete(input.id);
    case 'analytics.dryRun':
      return client.analytics.dryRun(input.definition);
    case 'analytics.create':
      return client.analytics.create(input.definition);
    case 'analytics.update':
      return client.analytics.update(input.name, input.definition);
    case 'analytics.describe':
      return client.analytics.describe(input.name, { version: input.version });
    case 'calls.list':
      return client.calls.list({ analytic: input.analytic, status: input.status, limit: input.limit });
    case 'calls.listAll':
      return collect(
        client.calls.listAll({ analytic: input.analytic, status: input.status, pageSize: input.page_size }),
      );
    case 'analytics.versions':
      return client.analytics.versions(input.name);
    case 'analytics.deprecate':
      return client.analytics.deprecate(input.name, input.version, { sunset: input.sunset });
    case 'analytics.undeprecate':
      return client.analytics.undeprecate(input.name, input.version);
    case 'analytics.list':
      return client.analytics.list();
    case 'analytics.purgeCache':
      return client.analytics.purgeCache(input.name);
    case 'analytics.delete':
      return client.analytics.delete(input.name);
    case 'listings.get':
      return client.listings.get(input.name);
    case 'listings.unpublish':
      return client.listings.unpublish(input.name);
    case 'signUp':
      // A call without a credential, to the case's base URL.
      return quarry.signUp(baseUrl, { email: input.email, name: input.name });
    case 'sleep':
      await new Promise((resolve) => setTimeout(resolve, input.seconds * 1000));
      return undefined;
  }
}

/** The family name of an error: its class name less `Error` (`RateLimitError` → `RateLimit`). */
function checkError(expected: ErrorExpectation, error: unknown): string[] {
  if (!(error instanceof quarry.QuarryError))
    return [`expected a ${expected.family} error, got ${String(error)}`];
  const family = (quarry as unknown as Record<string, unknown>)[`${expected.family}Error`];
  const problems: string[] = [];
  if (typeof family !== 'function' || !(error instanceof (family as typeof quarry.QuarryError))) {
    problems.push(
      `expected the ${expected.family} family, got ${error.name} ${error.code}: ${error.message}`,
    );
  }
  if (expected.code !== undefined && error.code !== expected.code) problems.push(`code ${error.code}`);
  if (expected.status !== undefined && error.status !== expected.status)
    problems.push(`status ${error.status}`);
  if (error.message === '') problems.push('an empty message');
  if (expected.request_id && !error.requestId) problems.push('no request id');
  if (expected.retry_after === 'positive' && !((error.retryAfter ?? 0) > 0)) {
    problems.push(`retry_after ${error.retryAfter}`);
  }
  for (const param of expected.detail_params ?? []) {
    if (!error.details.some((d) => d.param === param)) problems.push(`no detail for param ${param}`);
  }
  for (const [name, value] of Object.entries(expected.detail_values ?? {})) {
    const detail = error.details.find((d) => d.field === name || d.param === name);
    if (detail?.value !== value)
      problems.push(`detail ${name}: value ${String(detail?.value)}, expected ${value}`);
  }
  if (expected.text_names_code_and_request_id) {
    const text = String(error);
    if (!text.includes(error.code) || !error.requestId || !text.includes(error.requestId)) {
      problems.push(`the error's text names not its code and request id: ${text}`);
    }
  }
  return problems;
}

function checkResult(step: Step, result: unknown, saved: Record<string, unknown>): string[] {
  const expect = step.expect ?? {};
  if (expect.error) return [`expected a ${expect.error.family} error, got a result`];
  const problems: string[] = [];
  if (expect.result !== undefined)
    problems.push(...matchExpected(resolveSaved(expect.result, saved), result));
  if (expect.contains !== undefined) {
    const wanted = resolveSaved(expect.contains, saved);
    const list = Array.isArray(result) ? result : [];
    if (!list.some((item) => matchExpected(wanted, item).length === 0)) {
      problems.push(`no item matches ${JSON.stringify(wanted)} in ${JSON.stringify(result)}`);
    }
  }
  if (expect.absent_field !== undefined && Array.isArray(result)) {
    const field = expect.absent_field;
    if (result.some((item) => typeof item === 'object' && item !== null && item[field] != null)) {
      problems.push(`an item has the field ${field}`);
    }
  }
  if (expect.usage_since) {
    const before = saved[expect.usage_since.saved] as quarry.Usage;
    const now = result as quarry.Usage;
    const calls = now.totals.calls - before.totals.calls;
    const credits = now.totals.credits - before.totals.credits;
    if (calls !== expect.usage_since.calls || credits !== expect.usage_since.credits) {
      problems.push(`usage grew by ${calls} calls and ${credits} credits`);
    }
  }
  return problems;
}

/** Plays one case; resolves with its problems (empty: passed). */
export async function runTypeScriptCase(fixture: RunnerFixture, c: ConformanceCase): Promise<string[]> {
  // Cases name a runner's own analytics as `$fixture.sources.<name>`.
  const saved: Record<string, unknown> = { fixture };
  const clientFor = clientFactory(fixture, c, saved);
  const problems: string[] = [];
  for (const [index, step] of c.steps.entries()) {
    const started = performance.now();
    let stepProblems: string[];
    try {
      const result = await perform(
        clientFor(step),
        resolveSaved(step, saved) as Step,
        `${fixture.base_url}/${c.name}`,
      );
      if (step.save) saved[step.save] = result;
      stepProblems = checkResult(step, result, saved);
    } catch (error) {
      stepProblems = step.expect?.error
        ? checkError(step.expect.error, error)
        : [`unexpected error ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`];
    }
    const seconds = (performance.now() - started) / 1000;
    if (step.max_seconds !== undefined && seconds > step.max_seconds) {
      stepProblems.push(`took ${seconds.toFixed(2)} s, more than ${step.max_seconds} s`);
    }
    problems.push(...stepProblems.map((p) => `step ${index} (${step.op}): ${p}`));
  }
  const check = (await (await fetch(`${fixture.check_url}/${c.name}`)).json()) as {
    ok: boolean;
    problems: string[];
  };
  problems.push(...check.problems.map((p) => `traffic: ${p}`));
  return problems;
}
