// Reads the hypervisor's CPU steal from /proc/stat, so a bench can flag (and drop) windows in
// which the machine was not really ours: steal comes in bursts.
import { readFileSync } from 'node:fs';

/** Cumulative CPU jiffies of all cores: the `steal` column and the sum of every column. */
export interface CpuTimes {
  readonly steal: number;
  readonly total: number;
}

/** The aggregate `cpu` line of /proc/stat; undefined where /proc/stat does not exist (not Linux). */
export function readCpuTimes(): CpuTimes | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/stat', 'utf8');
  } catch {
    return undefined;
  }
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (line === undefined) return undefined;
  // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already
  // counted in user/nice, so it is left out of the total.
  const fields = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, v) => sum + v, 0);
  return { steal: fields[7] ?? 0, total };
}

/** Fraction (0–1) of CPU time stolen between two readings; 0 when unknown or no time passed. */
export function stealFraction(before: CpuTimes | undefined, after: CpuTimes | undefined): number {
  if (before === undefined || after === undefined) return 0;
  const total = after.total - before.total;
  return total > 0 ? (after.steal - before.steal) / total : 0;
}
