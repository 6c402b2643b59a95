// The plugin's shape, and that registering it stays cheap: snowflake-sdk (half a second to import,
// and it probes the host's cloud metadata unless told not to) loads only when a driver is created.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { plugin, snowflakePlugin } from './index.js';

const run = promisify(execFile);
const indexUrl = new URL('./index.ts', import.meta.url).href;

/** Runs `body` in a fresh Node process (with tsx) and returns what it printed. */
async function inFreshProcess(body: string): Promise<string> {
  const script = `
    import { createRequire } from 'node:module';
    const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('snowflake-sdk'));
    const { plugin } = await import(${JSON.stringify(indexUrl)});
    ${body}
  `;
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', '--conditions=@quarry/source', '--input-type=module', '-e', script],
    {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      env: { ...process.env, SNOWFLAKE_DISABLE_PLATFORM_DETECTION: '' },
    },
  );
  return stdout.trim();
}

describe('snowflakePlugin', () => {
  it('is exported as plugin, type snowflake, positional placeholders', () => {
    expect(plugin).toBe(snowflakePlugin);
    expect(plugin.type).toBe('snowflake');
    expect(plugin.dialect.placeholders).toBe('positional');
  });

  it('does not load snowflake-sdk until a driver is created, then loads it with platform probing off', async () => {
    const out = await inFreshProcess(`
      const before = loaded();
      const config = plugin.configSchema.parse({ account: 'a', username: 'u', password: 'p' });
      const noop = { debug() {}, info() {}, warn() {}, error() {} };
      const { createDestinationGuard, OPERATOR_TRUSTED } = await import('@quarry/sdk-connector');
      const destinations = createDestinationGuard(OPERATOR_TRUSTED);
      const driver = await plugin.createDriver(config, { logger: noop, destinations });
      console.log(JSON.stringify([before, loaded(), process.env.SNOWFLAKE_DISABLE_PLATFORM_DETECTION]));
      await driver.destroy();
    `);
    expect(JSON.parse(out)).toEqual([false, true, 'true']);
  }, 20_000);
});
