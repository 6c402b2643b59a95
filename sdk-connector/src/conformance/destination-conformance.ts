// Checks that a connector cannot be pointed at the gateway host (issue 17): for each kind of
// forbidden destination the connector's test gives a config for, the plugin declares it
// (`destinations`, for the gateway's 403 at creation) and its driver refuses it at connect time
// under the gateway's strictest policy, while the operator's policy lets loopback and host files
// through and still refuses cloud metadata.
import { expect } from 'vitest';
import {
  type ConnectorPlugin,
  checkDestinations,
  createConnector,
  createDestinationGuard,
  type DestinationPolicy,
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

/** What test() does under `policy`: undefined when it succeeds, else what it threw. */
async function outcomeUnder(
  h: ConformanceHarness,
  config: unknown,
  policy: DestinationPolicy,
): Promise<unknown> {
  try {
    const connector = await createConnector(h.options.plugin, config, {
      ...connectorOptions(h.options),
      destinations: policy,
      pool: { max: 1, acquireTimeoutMs: 5_000 },
    });
    try {
      await connector.test();
      return undefined;
    } finally {
      await connector.close();
    }
  } catch (error) {
    return error;
  }
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
}
