// Issue 29, finding 8: MCP sessions were evicted oldest-first across all accounts, and a tool call
// on the node:http fast path (how agents call tools) did not count as use: accounts opening many
// sessions pushed out every agent, even one busy calling tools. Each account now holds at most
// QUARRY_MCP_SESSIONS_PER_ACCOUNT sessions (its own least recently used go first), and past
// QUARRY_MCP_SESSIONS the least recently used session of the process goes, a tool call counting as use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setPlan } from '../support/metering-fixture.js';
import { pgAvailable, serviceUp } from '../support/test-services.js';
import { type AttackWorld, createAttackWorld, type WorldAccount } from './support/world.js';

const up = serviceUp(await pgAvailable());

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

/** Opens a session with a raw `initialize`; its id. */
async function open(w: AttackWorld, key: string): Promise<string> {
  const res = await w.call('POST', '/mcp', {
    key,
    headers: MCP_HEADERS,
    raw: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'flood', version: '1' },
      },
    }),
  });
  const id = res.headers.get('mcp-session-id');
  expect(res.status, res.text).toBe(200);
  return id as string;
}

/** A `tools/call` in the session (the fast path's kind of request): its HTTP status. */
async function useTool(w: AttackWorld, key: string, session: string): Promise<number> {
  const res = await w.call('POST', '/mcp', {
    key,
    headers: { ...MCP_HEADERS, 'mcp-session-id': session },
    raw: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: w.names.listed, arguments: { upto: 1 } },
    }),
  });
  if (res.status === 200) expect(res.body.result.isError, res.text).toBeFalsy();
  return res.status;
}

/** The agent's account chooses the listed analytic as a tool (an agent calls only its account's choice). */
async function addTool(w: AttackWorld): Promise<void> {
  const res = await w.call('POST', '/v1/account/tools', {
    key: w.friend.key,
    json: { source: w.names.listed },
  });
  expect(res.status, res.text).toBe(201);
}

/** Whether the session is still open: 404 (-32001) once it is gone. */
async function alive(w: AttackWorld, key: string, session: string): Promise<boolean> {
  const res = await w.call('POST', '/mcp', {
    key,
    headers: { ...MCP_HEADERS, 'mcp-session-id': session },
    raw: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
  });
  return res.status !== 404;
}

/** `n` accounts on the Enterprise plan (a burst of 100 management calls: sessions open at once). */
async function accounts(w: AttackWorld, label: string, n: number): Promise<WorldAccount[]> {
  const all: WorldAccount[] = [];
  for (let i = 0; i < n; i++) {
    const account = await w.signUp(`${label}-${i}`);
    await setPlan(w.schema.schema, account.id, 'enterprise');
    all.push(account);
  }
  return all;
}

describe.runIf(up)('MCP sessions under a flood of accounts (default bounds)', () => {
  let w: AttackWorld;
  beforeAll(async () => {
    w = await createAttackWorld({ label: 'mcpflood', env: { QUARRY_SIGNUPS_PER_HOUR: '1000' } });
    await setPlan(w.schema.schema, w.friend.id, 'enterprise');
    await addTool(w);
  }, 180_000);
  afterAll(async () => {
    await w?.stop();
  }, 60_000);

  it('keeps a busy agent’s session while 51 accounts open 20 sessions each', async () => {
    const agent = await open(w, w.friend.key);
    expect(await useTool(w, w.friend.key, agent)).toBe(200);
    const flood = await accounts(w, 'flood', 51);
    const opened: string[][] = [];
    for (const account of flood) {
      const mine: string[] = [];
      for (let i = 0; i < 20; i++) mine.push(await open(w, account.key));
      opened.push(mine);
      // The agent keeps calling its tool all along.
      expect(await useTool(w, w.friend.key, agent)).toBe(200);
    }
    expect(await alive(w, w.friend.key, agent)).toBe(true);
    // Each account holds its 5 most recent sessions (QUARRY_MCP_SESSIONS_PER_ACCOUNT's default).
    const first = flood[0] as WorldAccount;
    const kept = [];
    for (const id of opened[0] as string[]) kept.push(await alive(w, first.key, id));
    expect(kept).toEqual([...Array(15).fill(false), ...Array(5).fill(true)]);
  }, 180_000);
});

describe.runIf(up)('MCP session bounds (QUARRY_MCP_SESSIONS=6, QUARRY_MCP_SESSIONS_PER_ACCOUNT=2)', () => {
  let w: AttackWorld;
  beforeAll(async () => {
    w = await createAttackWorld({
      label: 'mcpbounds',
      env: {
        QUARRY_SIGNUPS_PER_HOUR: '100',
        QUARRY_MCP_SESSIONS: '6',
        QUARRY_MCP_SESSIONS_PER_ACCOUNT: '2',
      },
    });
    await setPlan(w.schema.schema, w.friend.id, 'enterprise');
    await addTool(w);
  }, 180_000);
  afterAll(async () => {
    await w?.stop();
  }, 60_000);

  it("evicts an account's own least recently used session past its bound", async () => {
    const [a] = await accounts(w, 'own', 1);
    const key = (a as WorldAccount).key;
    const s1 = await open(w, key);
    const s2 = await open(w, key);
    // s1 used after s2 was opened: s2 is the least recently used of the two.
    expect(await alive(w, key, s1)).toBe(true);
    const s3 = await open(w, key);
    expect([await alive(w, key, s1), await alive(w, key, s2), await alive(w, key, s3)]).toEqual([
      true,
      false,
      true,
    ]);
  });

  it("past the process's bound, evicts the least recently used sessions, not an agent in use", async () => {
    const agent = await open(w, w.friend.key);
    const others = await accounts(w, 'many', 4);
    const idle = await open(w, (others[0] as WorldAccount).key);
    const opened: { key: string; id: string }[] = [];
    for (const account of others.slice(1)) {
      for (let i = 0; i < 2; i++) {
        opened.push({ key: account.key, id: await open(w, account.key) });
        expect(await useTool(w, w.friend.key, agent)).toBe(200);
      }
    }
    expect(await alive(w, w.friend.key, agent)).toBe(true);
    expect(await alive(w, (others[0] as WorldAccount).key, idle)).toBe(false);
    // The 6 sessions kept: the agent's and the 5 most recently opened.
    const kept = [];
    for (const { key, id } of opened) kept.push(await alive(w, key, id));
    expect(kept).toEqual([false, true, true, true, true, true]);
  });
});
