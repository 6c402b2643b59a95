// `npm run seed -w @quarry/examples -- [path] [--rows N]`: creates the demo DuckDB warehouse and
// says what it did. The only module of this package that reads argv or the environment.
import { isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_DEMO_ROWS, seedDemoWarehouse } from './seed-demo-warehouse.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const USAGE = 'usage: npm run seed -w @quarry/examples -- [path/to/demo.duckdb] [--rows N]';

interface CliArgs {
  readonly path: string | undefined;
  readonly rows: number;
}

function parseArgs(argv: readonly string[]): CliArgs {
  let path: string | undefined;
  let rows = DEFAULT_DEMO_ROWS;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else if (arg === '--rows') {
      rows = Number(argv[++i]);
      if (!Number.isSafeInteger(rows) || rows < 0)
        throw new Error(`--rows needs a non-negative integer\n${USAGE}`);
    } else if (arg.startsWith('-')) {
      throw new Error(`unknown option ${arg}\n${USAGE}`);
    } else if (path === undefined) {
      path = arg;
    } else {
      throw new Error(`unexpected argument ${arg}\n${USAGE}`);
    }
  }
  return { path, rows };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  // npm runs workspace scripts inside the workspace folder; INIT_CWD is where the user typed.
  const userCwd = process.env.INIT_CWD ?? process.cwd();
  const dataDir = process.env.QUARRY_DATA_DIR;
  const target =
    args.path !== undefined
      ? resolve(userCwd, args.path)
      : dataDir !== undefined && dataDir !== ''
        ? resolve(isAbsolute(dataDir) ? dataDir : resolve(userCwd, dataDir), 'demo.duckdb')
        : resolve(REPO_ROOT, '.quarry', 'demo.duckdb');
  const started = performance.now();
  const result = await seedDemoWarehouse(target, { rows: args.rows });
  const seconds = ((performance.now() - started) / 1000).toFixed(2);
  const fromCwd = relative(userCwd, target);
  const shown = fromCwd.startsWith('..') || isAbsolute(fromCwd) ? target : fromCwd;
  if (result.created) {
    console.log(`created demo warehouse ${shown}: ${result.rows} sales rows in ${seconds} s`);
  } else {
    console.log(`demo warehouse ${shown} is up to date (${result.rows} sales rows); left untouched`);
  }
}

main().catch((error: unknown) => {
  console.error(`seed failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
