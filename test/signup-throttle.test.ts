// Sign-up is throttled per client address (docs/design.md §4, abuse limits). Before the throttle one
// client made 200 accounts in 0.74 s, each with an all-scope key. Real gateway processes on the
// real Postgres store: the default allowance (5 an hour) from one socket address, whatever
// X-Forwarded-For the client makes up; behind a trusted proxy (QUARRY_TRUST_PROXY=1) each
// forwarded address has its own allowance, shared by two instances through Redis, and entries a
// client prepends to the header change nothing.
import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient, type HttpResponse } from './support/http-client.js';
import {
  pgAvailable,
  redisAvailable,
  serviceUp,
  TEST_REDIS_URL,
  uniqueSuffix,
} from './support/test-services.js';

const up = serviceUp(await pgAvailable()) && serviceUp(await redisAvailable());
const suffix = uniqueSuffix();
const http = createHttpClient();
let counter = 0;

/** One secret key for the fleet: instances on one store must share it (they refuse to start otherwise). */
const SECRET_KEY = randomBytes(32).toString('base64');

/** The gateway's environment with the sign-up throttle at its default (the tests' helper lifts it). */
function defaultThrottleEnv(databaseUrl: string): Record<string, string> {
  const { QUARRY_SIGNUPS_PER_HOUR: _lifted, ...env } = postgresStoreEnv(databaseUrl, SECRET_KEY);
  return env;
}

function signUp(gateway: GatewayProcess, forwardedFor?: string): Promise<HttpResponse> {
  counter += 1;
  return http.request(gateway.url, 'POST', '/v1/accounts', {
    json: { email: `signup-${suffix}-${counter}@throttle.quarry.test`, name: `Sign-up ${counter}` },
    ...(forwardedFor === undefined ? {} : { headers: { 'x-forwarded-for': forwardedFor } }),
  });
}

/** Every refusal is the 429 envelope with a retry hint in the body and the header. */
function expectThrottled(response: HttpResponse): void {
  expectErrorEnvelope(response, 429, 'RATE_LIMIT_EXCEEDED');
  const retryAfter = response.body.error.retry_after;
  expect(typeof retryAfter).toBe('number');
  // One more sign-up is allowed every 3600 / 5 = 720 s.
  expect(retryAfter).toBeGreaterThan(600);
  expect(retryAfter).toBeLessThanOrEqual(720);
  expect(response.headers.get('retry-after')).toBe(String(Math.ceil(retryAfter)));
}

/** A random private address, so the buckets this run leaves in Redis never meet another run's. */
const randomAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

describe.runIf(up)('sign-up throttle per client address (real gateways)', () => {
  let store: ControlPlaneSchema;
  let direct: GatewayProcess;
  let proxied: [GatewayProcess, GatewayProcess];

  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_e2e_signup_${suffix}`);
    direct = await startGateway({ env: defaultThrottleEnv(store.databaseUrl) });
    const proxiedEnv = {
      ...defaultThrottleEnv(store.databaseUrl),
      QUARRY_TRUST_PROXY: '1',
      QUARRY_REDIS_URL: TEST_REDIS_URL,
    };
    const first = await startGateway({ env: proxiedEnv });
    proxied = [first, await startGateway({ env: proxiedEnv })];
  }, 180_000);

  afterAll(async () => {
    await Promise.allSettled([direct?.stop(), ...(proxied ?? []).map((g) => g.stop())]);
    await store?.drop();
  });

  it('admits 5 of 20 sign-ups from one address in a minute; a made-up X-Forwarded-For changes nothing', async () => {
    const started = Date.now();
    const answers: HttpResponse[] = [];
    // Half of them claim to come from elsewhere: without QUARRY_TRUST_PROXY the header is ignored.
    for (let i = 0; i < 20; i += 1)
      answers.push(await signUp(direct, i % 2 === 0 ? undefined : randomAddress()));
    expect(Date.now() - started).toBeLessThan(60_000);
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(5);
    expect(answers.slice(0, 5).every((a) => a.status === 201)).toBe(true);
    for (const refused of answers.slice(5)) expectThrottled(refused);
    // An admitted sign-up says how many are left.
    expect(created[0]?.headers.get('ratelimit')).toBe('"signup";r=4;t=720');
  });

  it('behind a trusted proxy, gives each forwarded address its own allowance across instances', async () => {
    const [g1, g2] = proxied;
    const alice = randomAddress();
    const bob = randomAddress();
    const statuses = async (address: string, count: number) => {
      const answers: HttpResponse[] = [];
      // Alternating instances: the allowance is shared through Redis, not per instance.
      for (let i = 0; i < count; i += 1) answers.push(await signUp(i % 2 === 0 ? g1 : g2, address));
      return answers;
    };
    const fromAlice = await statuses(alice, 8);
    expect(fromAlice.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 429, 429, 429]);
    for (const refused of fromAlice.slice(5)) expectThrottled(refused);
    // Another address behind the same proxy is not held back by Alice's sign-ups.
    const fromBob = await statuses(bob, 6);
    expect(fromBob.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 429]);
    // The proxy appends what it saw; what the client wrote before that is not trusted.
    const spoofed = await signUp(g1, `${randomAddress()}, ${alice}`);
    expectThrottled(spoofed);
  });
});
