import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDestinationGuard, isDestinationRefusal } from './destination-guard.js';
import { OPERATOR_TRUSTED, PUBLIC_ONLY } from './destination-policy.js';
import { createGuardedAgents, type GuardedAgents } from './guarded-http-agents.js';

let server: http.Server;
let port = 0;
let hits = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    hits++;
    const size = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('size') ?? '2');
    res.end('x'.repeat(size));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** GETs `url` through `agents`; resolves with the body or rejects with the request's error. */
function get(agents: GuardedAgents, url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent: agents.http }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      response.on('end', () => resolve(body));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('createGuardedAgents', () => {
  it('refuses a loopback server before connecting when private networks are not allowed', async () => {
    const agents = createGuardedAgents(createDestinationGuard(PUBLIC_ONLY));
    const before = hits;
    expect(isDestinationRefusal(await failure(get(agents, `http://127.0.0.1:${port}/`)))).toBe(true);
    // A name that resolves to loopback is refused by the guarded lookup the same way.
    expect(isDestinationRefusal(await failure(get(agents, `http://localhost:${port}/`)))).toBe(true);
    expect(hits).toBe(before);
    agents.destroy();
  });

  it('connects to the address the guard resolved, not to what the system resolver says', async () => {
    const guard = createDestinationGuard(OPERATOR_TRUSTED, {
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    const agents = createGuardedAgents(guard);
    // No DNS knows this name: only the guard's answer can make this request succeed.
    await expect(get(agents, `http://warehouse.quarry.invalid:${port}/`)).resolves.toBe('xx');
    agents.destroy();
  });

  it('reports a name that now resolves to a forbidden address to onRefused, reaching nothing', async () => {
    // A name that rebinds to cloud metadata: the guard's lookup for the new socket refuses it.
    const guard = createDestinationGuard(OPERATOR_TRUSTED, {
      resolve: async () => [{ address: '169.254.169.254', family: 4 }],
    });
    const refused: unknown[] = [];
    const agents = createGuardedAgents(guard, { onRefused: (error) => refused.push(error) });
    const before = hits;
    const error = await failure(get(agents, `http://warehouse.quarry.invalid:${port}/`));
    expect(isDestinationRefusal(error)).toBe(true);
    expect(refused).toEqual([error]);
    expect(String(error)).toContain('169.254.169.254');
    expect(hits).toBe(before);
    agents.destroy();
  });

  it('stays on the configured hosts: a request to another host fails before connecting', async () => {
    const agents = createGuardedAgents(createDestinationGuard(OPERATOR_TRUSTED), { hosts: ['127.0.0.1'] });
    await expect(get(agents, `http://127.0.0.1:${port}/`)).resolves.toBe('xx');
    const error = await failure(get(agents, `http://localhost:${port}/`));
    expect(isDestinationRefusal(error)).toBe(true);
    expect(String(error)).toContain('another host');
    agents.destroy();
  });

  it('cuts a response body past maxResponseBytes', async () => {
    const agents = createGuardedAgents(createDestinationGuard(OPERATOR_TRUSTED), {
      maxResponseBytes: 10_000,
    });
    await expect(get(agents, `http://127.0.0.1:${port}/?size=10000`)).resolves.toHaveLength(10_000);
    const error = await failure(get(agents, `http://127.0.0.1:${port}/?size=5000000`));
    expect(error).toMatchObject({ driverCode: 'RESPONSE_TOO_LARGE' });
    agents.destroy();
  });
});
