/** The V8 heap flags the gateway runs with under `npm start` (see gateway-heap-flags.mjs). */
export function gatewayHeapFlags(env: Readonly<Record<string, string | undefined>>): string[];
/** The malloc setting the gateway runs with under `npm start` (see gateway-heap-flags.mjs). */
export function gatewayMallocEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string>;
/** The thread-pool size the gateway runs with under `npm start` (see gateway-heap-flags.mjs). */
export function gatewayThreadpoolEnv(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string>;
