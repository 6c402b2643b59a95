// The runtime's CPU per query when callers must wait for a session (run it by hand; it is not a
// test):
//   npx tsx --conditions=@quarry/source sdk-connector/src/pool-wait.bench.ts [rounds]
// 64 callers loop over one query on a connector whose session answers on the next turn of the
// event loop (no warehouse), with a pool of 64 sessions (nobody waits) and of 10 (most callers
// wait for a release), alternating 2-second windows. Prints this process's CPU per query for both
// and the difference: what waiting for a session costs the runtime.
import { z } from 'zod';
import type { ConnectorPlugin } from './connector-plugin.js';
import { createConnector } from './create-connector.js';
import { validateParams } from './param-schema.js';
import { parseTemplate } from './sql-template.js';

const columns = [
  { name: 'id', type: 'integer' as const },
  { name: 'name', type: 'string' as const },
];
const session = {
  execute: (query: { readonly params: readonly { readonly value: unknown }[] }) =>
    new Promise((resolve) =>
      setImmediate(() => resolve({ columns, rows: [[Number(query.params[0]?.value), 'name']] })),
    ),
  validate: () => true,
  close: async () => {},
};
const plugin = {
  type: 'null',
  configSchema: z.object({}).strict(),
  dialect: { placeholders: 'numbered' },
  createDriver: () => ({ createSession: async () => session }),
} as unknown as ConnectorPlugin;
const template = parseTemplate('SELECT id, name FROM kv WHERE id = :id', plugin.dialect);
const checked = validateParams({ id: { type: 'integer', required: true } }, { id: 42 });
if (!checked.ok) throw new Error('params refused');
const params = checked.values;

/** CPU µs per query of `callers` loops for `ms` on a pool of `max` sessions. */
async function window(max: number, ms: number, callers = 64): Promise<number> {
  const connector = await createConnector(plugin, {}, { pool: { min: 0, max } });
  const deadline = performance.now() + ms;
  let queries = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < deadline) {
        await connector.query({ template, params, timeoutMs: 5_000, maxRows: 1_000 });
        queries++;
      }
    }),
  );
  const cpu = process.cpuUsage(before);
  await connector.close();
  return (cpu.user + cpu.system) / queries;
}

const rounds = Number(process.argv[2] ?? 4);
await window(10, 1_000);
await window(64, 1_000);
for (let round = 0; round < rounds; round++) {
  const idle = await window(64, 2_000);
  const waiting = await window(10, 2_000);
  console.log(
    `pool of 64 (nobody waits) ${idle.toFixed(2)} µs/query, pool of 10 (callers wait) ${waiting.toFixed(2)} µs/query, waiting costs ${(waiting - idle).toFixed(2)}`,
  );
}
