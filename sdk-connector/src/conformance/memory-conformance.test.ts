// Runs the conformance kit against the SDK's in-memory plugin, all 14 checks. This proves the kit
// itself (every check must pass on a correct runtime) and the SDK runtime's share of the contract:
// binding, typed NULLs, arrays, JSON-safe values, row caps, time limits cancelled on the "server",
// pooling, session replacement, close, unreachable warehouses, and error redaction.
import { createMemoryPlugin } from '../testing/memory-plugin.js';
import { CONFORMANCE_COLUMNS, CONFORMANCE_ROWS } from './conformance-fixture.js';
import { describeConnectorConformance } from './index.js';

const memory = createMemoryPlugin();

describeConnectorConformance({
  name: 'memory',
  plugin: memory,
  config: () => ({ database: 'conformance' }),
  setup: async (table) => {
    memory.control.tables.set(table, {
      columns: CONFORMANCE_COLUMNS.map((column) => ({ name: column.name, type: column.type })),
      rows: CONFORMANCE_ROWS.map((row) => CONFORMANCE_COLUMNS.map((column) => row[column.name])),
    });
  },
  teardown: async (table) => {
    memory.control.tables.delete(table);
  },
  sql: {
    echo: () => 'SELECT :v AS v',
    slow: (marker) => `SELECT sleep(10) /* ${marker} */`,
    inList: (table) => `SELECT * FROM ${table} WHERE id = ANY(:ids)`,
    all: (table) => `SELECT * FROM ${table}`,
    byName: (table) => `SELECT * FROM ${table} WHERE name = :name`,
  },
  runningQueries: async (marker) => memory.control.runningQueries(marker),
  killSessions: async () => memory.control.killSessions(),
  unreachableConfig: () => ({ database: 'x', unreachable: true }),
  notApplicable: {
    destinations:
      'the memory plugin is a test double inside this process: it reaches no host, socket or file',
  },
});
