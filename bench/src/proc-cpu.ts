// CPU time of the processes a window loads, from /proc: the server under test (bare node:http or
// the gateway) and PostgreSQL (the server, its live backends and the backends it has reaped). On
// two shared cores these say where a scenario's CPU goes, which bounds its req/s more than any
// code path does (see the README's Performance section). Zero where /proc does not exist.
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: /proc/<pid>/stat counts CPU time in these ticks (100 on every Linux we run). */
const CLOCK_TICKS = 100;

/** Fields of /proc/<pid>/stat after the command, 0-based: utime, stime, cutime, cstime. */
const UTIME = 11;
const CUTIME = 13;

function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** utime + stime of one process, in seconds; 0 once it has exited. */
export function processCpuSeconds(pid: number): number {
  const f = statFields(pid);
  return f === undefined ? 0 : (Number(f[UTIME]) + Number(f[UTIME + 1])) / CLOCK_TICKS;
}

/**
 * CPU seconds of every process whose command is `postgres`, including what the children they
 * have reaped used (cutime + cstime: backends that ended within a window still count).
 */
export function postgresCpuSeconds(): number {
  let ticks = 0;
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    const f = statFields(Number(name));
    if (f === undefined) continue;
    for (let i = UTIME; i <= CUTIME + 1; i++) ticks += Number(f[i]);
  }
  return ticks / CLOCK_TICKS;
}

/** CPU of the server under test and of PostgreSQL over one window, in cores (1 = one full core). */
export interface ServerCpu {
  readonly serverCpu: number;
  readonly postgresCpu: number;
}

/**
 * Starts the CPU clocks of the server under test (undefined: no server, as in a direct pg loop;
 * several pids: instances of one fleet, summed) and PostgreSQL.
 */
export function startServerCpu(
  serverPid: number | readonly number[] | undefined,
): (seconds: number) => ServerCpu {
  const pids = serverPid === undefined ? [] : typeof serverPid === 'number' ? [serverPid] : serverPid;
  const serversCpu = () => pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
  const server = serversCpu();
  const postgres = postgresCpuSeconds();
  return (seconds) => ({
    serverCpu: (serversCpu() - server) / seconds,
    postgresCpu: (postgresCpuSeconds() - postgres) / seconds,
  });
}
