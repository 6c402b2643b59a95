/** The V8 heap flags the gateway runs with under `npm start` (see gateway-heap-flags.mjs). */
export function gatewayHeapFlags(env: Readonly<Record<string, string | undefined>>): string[];
/** QUARRY_SEMI_SPACE_MB as V8 takes it, 8 when unset; throws on anything but 1–256 whole MiB. */
export function semiSpaceMb(value: string | undefined): number;
/** The malloc setting the gateway runs with under `npm start` (see gateway-heap-flags.mjs). */
export function gatewayMallocEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string>;
/** The thread-pool size the gateway runs with under `npm start` (see gateway-heap-flags.mjs). */
export function gatewayThreadpoolEnv(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string>;
