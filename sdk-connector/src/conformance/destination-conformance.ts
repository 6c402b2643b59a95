// Checks that a connector cannot be pointed at the gateway host (issue 17): for each kind of
// forbidden destination the connector's test gives a config for, the plugin declares it
// (`destinations`, for the gateway's 403 at creation) and its driver refuses it at connect time
// under the gateway's strictest policy, while the operator's policy lets loopback and host files
// through and still refuses cloud metadata. And that the driver connects to the address the guard
// checked (DNS rebinding): with the warehouse named by a host name only the guard can resolve,
// sessions open and queries run without the system resolver ever being asked for that name.
import dns from 'node:dns';
import { expect } from 'vitest';
import {
  type ConnectorPlugin,
  checkDestinations,
  classifyAddress,
  createConnector,
  createDestinationGuard,
  type DestinationPolicy,
  type HostResolver,
  isDestinationRefusal,
  OPERATOR_TRUSTED,
  PUBLIC_ONLY,
  parseConnectorConfig,
} from '../index.js';
import { type ConformanceHarness, connectorOptions, describeOutcome } from './conformance-harness.js';
import type { ForbiddenDestinationKind } from './conformance-options.js';

const TEST_TIMEOUT_MS = 30_000;
const KINDS: readonly ForbiddenDestinationKind[] = [
  'loopback',
  'link-local',
  'private',
  'unix-socket',
  'host-file',
];

/**
 * What test() does under `policy` (resolving names with `resolve` when given), then, when
 * `query` is set and test() passed, a query of the fixture: undefined when all succeed, else
 * what was thrown.
 */
async function outcomeUnder(
  h: ConformanceHarness,
  config: unknown,
  policy: DestinationPolicy,
  { resolve, query = false }: { readonly resolve?: HostResolver; readonly query?: boolean } = {},
): Promise<unknown> {
  try {
    const connector = await createConnector(h.options.plugin, config, {
      ...connectorOptions(h.options),
      destinations: policy,
      ...(resolve === undefined ? {} : { resolve }),
      pool: { max: 1, acquireTimeoutMs: 5_000 },
    });
    try {
      await connector.test();
      if (query) await h.query(h.sql.all(h.table), {}, {}, connector);
      return undefined;
    } finally {
      await connector.close();
    }
  } catch (error) {
    return error;
  }
}

/**
 * Runs `run` while the system resolver (`dns.lookup`, callback and promise forms) fails for
 * `host` with ENOTFOUND; returns how many times it was asked for it. Other names resolve as usual.
 * Test code: it replaces `dns.lookup` for the duration of one check, then puts it back.
 */
async function trappingSystemResolver(host: string, run: () => Promise<void>): Promise<number> {
  const name = host.toLowerCase();
  let asked = 0;
  const notFound = (hostname: string) =>
    Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
      code: 'ENOTFOUND',
      syscall: 'getaddrinfo',
      hostname,
    });
  const lookup = dns.lookup;
  const promisesLookup = dns.promises.lookup;
  dns.lookup = ((hostname: string, ...rest: unknown[]) => {
    if (hostname.toLowerCase() !== name) return (lookup as (...a: unknown[]) => unknown)(hostname, ...rest);
    asked++;
    const callback = rest.at(-1) as (error: Error) => void;
    process.nextTick(() => callback(notFound(hostname)));
    return undefined;
  }) as typeof dns.lookup;
  dns.promises.lookup = (async (hostname: string, ...rest: unknown[]) => {
    if (hostname.toLowerCase() !== name) {
      return (promisesLookup as (...a: unknown[]) => Promise<unknown>)(hostname, ...rest);
    }
    asked++;
    throw notFound(hostname);
  }) as typeof dns.promises.lookup;
  try {
    await run();
  } finally {
    dns.lookup = lookup;
    dns.promises.lookup = promisesLookup;
  }
  return asked;
}

/** Registers the destination check (13 of the kit). */
export function registerDestinationConformance(h: ConformanceHarness): void {
  const build = h.options.forbiddenDestinations;
  h.check(
    'destinations',
    'cannot be pointed at loopback, link-local, private, unix-socket or host-file destinations the policy forbids',
    build === undefined
      ? 'no forbiddenDestinations given'
      : async () => {
          const plugin = h.options.plugin as ConnectorPlugin;
          const configs = KINDS.map((kind) => [kind, build(kind)] as const).filter(
            ([, c]) => c !== undefined,
          );
          expect(
            configs.length,
            'forbiddenDestinations gives a config for at least one kind',
          ).toBeGreaterThan(0);
          expect(typeof plugin.destinations, 'the plugin declares its destinations').toBe('function');
          const strict = createDestinationGuard(PUBLIC_ONLY);
          for (const [kind, config] of configs) {
            const declared = plugin.destinations?.(parseConnectorConfig(plugin, config)) ?? [];
            const atCreation = await checkDestinations(declared, strict).then(
              () => undefined,
              (e: unknown) => e,
            );
            expect(
              isDestinationRefusal(atCreation),
              `${kind}: declared destinations refused at creation, got ${describeOutcome(atCreation)}`,
            ).toBe(true);
            const strictOutcome = await outcomeUnder(h, config, PUBLIC_ONLY);
            expect(
              isDestinationRefusal(strictOutcome),
              `${kind}: the driver refuses it, got ${describeOutcome(strictOutcome)}`,
            ).toBe(true);
            if (kind === 'loopback' || kind === 'host-file') {
              const trusted = await outcomeUnder(h, config, OPERATOR_TRUSTED);
              expect(
                isDestinationRefusal(trusted),
                `${kind}: allowed by the operator's policy, got ${describeOutcome(trusted)}`,
              ).toBe(false);
            }
            if (kind === 'link-local') {
              const trusted = await outcomeUnder(h, config, OPERATOR_TRUSTED);
              expect(
                isDestinationRefusal(trusted),
                `${kind}: cloud metadata is refused whatever the policy`,
              ).toBe(true);
            }
          }
        },
    TEST_TIMEOUT_MS,
  );
  const named = h.options.namedWarehouse;
  h.check(
    'destinations',
    'connects to the address the destination guard checked, never resolving the host name again (DNS rebinding)',
    named === undefined
      ? 'no namedWarehouse given (none for a connector that reaches no network host): that the driver connects to the checked address is not proven'
      : async () => {
          const { host, address, config } = await named();
          expect(classifyAddress(host), 'namedWarehouse.host is a name, not an IP address').toBeUndefined();
          let answer = address;
          let guardAsked = 0;
          const resolve: HostResolver = async (name) => {
            if (name.toLowerCase() !== host.toLowerCase()) return [];
            guardAsked++;
            return [{ address: answer, family: answer.includes(':') ? 6 : 4 }];
          };
          let reached: unknown;
          const systemAsked = await trappingSystemResolver(host, async () => {
            reached = await outcomeUnder(h, config, OPERATOR_TRUSTED, { resolve, query: true });
          });
          expect(
            systemAsked,
            `the driver resolved "${host}" again for itself (${systemAsked} times) instead of connecting to the address the guard checked`,
          ).toBe(0);
          expect(
            reached,
            `a session opens and a query runs at the address the guard gave for "${host}", got ${describeOutcome(reached)}`,
          ).toBeUndefined();
          expect(guardAsked, `the guard was asked to resolve "${host}"`).toBeGreaterThan(0);
          // A new session checks again: the guard's answer is now cloud metadata.
          answer = '169.254.169.254';
          const rebound = await outcomeUnder(h, config, OPERATOR_TRUSTED, { resolve });
          expect(
            isDestinationRefusal(rebound),
            `a new connector is refused once "${host}" resolves to cloud metadata, got ${describeOutcome(rebound)}`,
          ).toBe(true);
        },
    TEST_TIMEOUT_MS,
  );
}
