// What the payments end-to-end tests share: gateways with QUARRY_PAYMENTS=stripe against the
// Stripe protocol fake, and small readers of what a caller sees (billing, checkout) and of what
// Stripe holds (an account's customer, subscription, connected account).
import { expect } from 'vitest';
import { withPg } from './control-plane.js';
import type { FakeStripe } from './fake-stripe/fake-stripe.js';
import type { GatewayProcess } from './gateway-process.js';
import type { HttpClient } from './http-client.js';
import { expectStatus } from './metering-fixture.js';

/** Generous rate limits on every plan: these tests are about money, not the meter. */
export const GENEROUS_RATE_LIMITS = JSON.stringify(
  Object.fromEntries(
    ['free', 'smb', 'enterprise', 'payg'].map((p) => [
      p,
      { limit: 100_000, window_seconds: 60, burst: 100_000 },
    ]),
  ),
);

/** The environment of a gateway paying through the fake. */
export function stripeEnv(stripe: FakeStripe): Record<string, string> {
  return {
    QUARRY_PAYMENTS: 'stripe',
    STRIPE_SECRET_KEY: 'sk_test_quarry',
    STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
    QUARRY_STRIPE_API_BASE: stripe.url,
    QUARRY_RATE_LIMITS: GENEROUS_RATE_LIMITS,
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `read` until `done` holds of its result, or fails with the last one after `timeoutMs`. */
export async function waitFor<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`still not there: ${JSON.stringify(value)}`);
    await sleep(100);
  }
}

/**
 * Waits until the ledger of `schema` holds the `count` calls `accounts` were served: metering is
 * written just behind the answer, and a test that moves calls to another month moves what is there.
 */
export async function servedCalls(schema: string, accounts: readonly string[], count: number): Promise<void> {
  await waitFor(
    () =>
      withPg(async (c) => {
        const { rows } = await c.query(
          `SELECT count(*)::int AS n FROM ${schema}.usage_events WHERE account_id = ANY ($1::text[]) AND completed_at IS NOT NULL`,
          [accounts],
        );
        return rows[0].n as number;
      }),
    (n) => n >= count,
  );
}

/** Reads of the gateways and of the fake, for one test file. */
export function paymentsFixture(http: HttpClient, stripe: () => FakeStripe) {
  // biome-ignore lint/suspicious/noExplicitAny: the tests read the answer's shape as documented.
  const billing = async (g: GatewayProcess, key: string): Promise<any> =>
    expectStatus(await http.request(g.url, 'GET', '/v1/billing', { key }), 200, 'billing').body;

  /** Starts a checkout of `plan`: the fake's session id. */
  async function checkout(g: GatewayProcess, key: string, plan: string): Promise<string> {
    const res = expectStatus(
      await http.request(g.url, 'POST', '/v1/billing/checkout', { key, json: { plan } }),
      200,
      `checkout ${plan}`,
    );
    expect(res.body.url).toBe(`${stripe().url}/checkout/pay/${res.body.id}`);
    return res.body.id as string;
  }

  /** Pays for `plan` through Checkout and waits until the gateway says so. */
  async function buy(g: GatewayProcess, key: string, plan: string): Promise<void> {
    await stripe().completeCheckout(await checkout(g, key, plan));
    await waitFor(
      () => billing(g, key),
      (b) => b.plan.id === plan,
    );
  }

  const customerOf = (accountId: string) => {
    const found = stripe()
      .customers()
      .filter((c) => c.metadata.quarry_account === accountId);
    expect(found).toHaveLength(1);
    return found[0]!;
  };

  const subscriptionOf = (accountId: string) => {
    const customer = customerOf(accountId).id;
    const subs = stripe()
      .subscriptions()
      .filter((s) => s.customer === customer);
    return subs[subs.length - 1]!;
  };

  const priceFor = (plan: string) => {
    const prices = stripe()
      .prices()
      .filter((p) => p.lookup_key?.startsWith(`quarry_${plan}_`));
    expect(prices).toHaveLength(1);
    return prices[0]!;
  };

  const connectedAccountOf = (accountId: string) => {
    const found = stripe()
      .accounts()
      .filter((a) => a.metadata?.quarry_account === accountId);
    expect(found).toHaveLength(1);
    return found[0]!;
  };

  return { billing, checkout, buy, customerOf, subscriptionOf, priceFor, connectedAccountOf };
}
