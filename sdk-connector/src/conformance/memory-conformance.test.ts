// Runs the conformance kit against the SDK's in-memory plugin. This proves the kit itself (every
// check it can express in the memory plugin's SQL subset must pass on a correct runtime) and the
// SDK runtime's share of the contract: binding, JSON-safe values, row caps, pooling, session
// replacement, close, and error redaction.
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
    slow: (marker) => `SELECT * FROM ${marker}`,
    inList: (table) => `SELECT * FROM ${table} WHERE id = ANY(:ids)`,
    all: (table) => `SELECT * FROM ${table}`,
    byName: (table) => `SELECT * FROM ${table} WHERE name = :name`,
  },
  killSessions: async () => memory.control.killSessions(),
  notApplicable: {
    typedNulls: 'the memory SQL subset has no `IS NULL OR`',
    arrays: 'the memory SQL subset has no `= ANY(…)` / `IN (…)`',
    timeout: 'the memory plugin delays every query alike (control.delayMs), not one marked query',
    unreachable:
      'createDriver returns one driver shared by every connector of the plugin, so closing one connector destroys it',
  },
});
