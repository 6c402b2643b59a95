// The gateway's group-commit counters (quarry_usage_write*_total on /metrics), per kind of write:
// read before and after a window, they give the batches written, calls per batch and time per
// batch of one instance.

export interface UsageWrites {
  writes: number;
  items: number;
  seconds: number;
}

/** The gateway's group-commit counters per kind (reserve, commit), from its /metrics. */
export async function usageWrites(gatewayUrl: string): Promise<Record<string, UsageWrites>> {
  const text = await (await fetch(`${gatewayUrl}/metrics`)).text();
  const out: Record<string, UsageWrites> = {};
  const fields = {
    quarry_usage_writes_total: 'writes',
    quarry_usage_write_items_total: 'items',
    quarry_usage_write_seconds_total: 'seconds',
  } as const;
  for (const line of text.split('\n')) {
    const match = /^(quarry_usage_write\w*)\{kind="(\w+)"\} ([\d.e+-]+)$/.exec(line);
    if (match === null) continue;
    const field = fields[match[1] as keyof typeof fields];
    if (field === undefined) continue;
    const kind = match[2] as string;
    out[kind] ??= { writes: 0, items: 0, seconds: 0 };
    out[kind][field] = Number(match[3]);
  }
  return out;
}
