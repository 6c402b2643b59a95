// HAProxy for the end-to-end tests: `haproxy -f <cfg> -db` (foreground) as a child process, and
// its admin socket spoken to the way docs/deploy.md's `socat stdio /run/haproxy/admin.sock` does.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Debian installs haproxy in /usr/sbin, which a non-root PATH may not hold. */
const HAPROXY = (process.env.PATH ?? '')
  .split(delimiter)
  .some((dir) => dir !== '' && existsSync(join(dir, 'haproxy')))
  ? 'haproxy'
  : '/usr/sbin/haproxy';

/** `true` when `haproxy` runs, else why not (for `serviceUp`). */
export async function haproxyAvailable(): Promise<true | string> {
  try {
    await run(HAPROXY, ['-v']);
    return true;
  } catch (error) {
    return `haproxy is not installed (${(error as Error).message}); .ci/run installs it with apt-get`;
  }
}

/** One row of `show stat`: a frontend, a backend or a server, by the CSV's own column names. */
export type HaproxyStat = Readonly<Record<string, string>>;

export interface HaproxyProcess {
  readonly child: ChildProcess;
  /** Everything haproxy wrote so far (warnings, alerts). */
  output(): string;
  /** One admin-socket command; resolves with its answer. */
  command(line: string): Promise<string>;
  /** `show stat`, one record per proxy and server. */
  stats(): Promise<HaproxyStat[]>;
  /** The `show stat` row of server `server` in backend `backend`. */
  server(backend: string, server: string): Promise<HaproxyStat>;
  stop(): Promise<void>;
}

function adminCommand(socketPath: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect(socketPath, () => socket.end(`${line}\n`));
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** Parses `show stat` CSV: the header is `# pxname,svname,…`. */
function parseStats(csv: string): HaproxyStat[] {
  const [header, ...rows] = csv.trim().split('\n');
  const columns = (header ?? '').replace(/^# /, '').split(',');
  return rows.map((row) => Object.fromEntries(row.split(',').map((value, i) => [columns[i] ?? '', value])));
}

/** Starts haproxy on `configPath` and resolves once its admin socket answers. */
export async function startHaproxy(configPath: string, adminSocket: string): Promise<HaproxyProcess> {
  await run(HAPROXY, ['-c', '-q', '-f', configPath]).catch((error: { stderr?: string }) => {
    throw new Error(`haproxy refuses the configuration:\n${error.stderr ?? String(error)}`);
  });
  const child = spawn(HAPROXY, ['-f', configPath, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: string) => {
    output += chunk;
  };
  child.stdout.setEncoding('utf8').on('data', collect);
  child.stderr.setEncoding('utf8').on('data', collect);
  let gone = false;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      gone = true;
      resolve();
    });
  });
  const command = (line: string) => adminCommand(adminSocket, line);
  const stats = async () => parseStats(await command('show stat'));
  const deadline = performance.now() + 15_000;
  for (;;) {
    if (gone) throw new Error(`haproxy exited before it was ready\n${output}`);
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`haproxy's admin socket did not answer within 15 s\n${output}`);
    }
    if ((await stats().catch(() => [])).length > 0) break;
    await sleep(100);
  }
  return {
    child,
    output: () => output,
    command,
    stats,
    async server(backend, server) {
      const row = (await stats()).find((r) => r.pxname === backend && r.svname === server);
      if (row === undefined) throw new Error(`haproxy has no server ${backend}/${server}`);
      return row;
    },
    async stop() {
      if (!gone) child.kill('SIGTERM');
      await exited;
    },
  };
}
