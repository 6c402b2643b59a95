// Resident memory of a process from /proc/<pid>/status: VmRSS (now) and VmHWM (its peak so far).
import { readFileSync } from 'node:fs';

/** A process's resident memory, in bytes. */
export interface ProcessMemory {
  readonly rssBytes: number;
  /** The kernel's high-water mark of rssBytes since the process started. */
  readonly peakRssBytes: number;
}

function kib(status: string, field: string): number | undefined {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match === null ? undefined : Number(match[1]) * 1024;
}

/** Reads `pid`'s memory; undefined when the process is gone or /proc does not exist (not Linux). */
export function readProcessMemory(pid: number): ProcessMemory | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const rssBytes = kib(status, 'VmRSS');
  const peakRssBytes = kib(status, 'VmHWM');
  if (rssBytes === undefined || peakRssBytes === undefined) return undefined;
  return { rssBytes, peakRssBytes };
}

/** Bytes as MiB with one decimal. */
export function mib(bytes: number): number {
  return Math.round((bytes / (1024 * 1024)) * 10) / 10;
}
