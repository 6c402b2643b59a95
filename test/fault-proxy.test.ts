// The fault proxy itself (support/fault-proxy.ts), against a local echo server: each mode does
// what the reliability tests rely on, switched while a connection is open.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaultProxy, type FaultProxy } from './support/fault-proxy.js';

let echo: Server;
let proxy: FaultProxy;

beforeAll(async () => {
  echo = createServer((socket) => {
    socket.on('error', () => {});
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const address = echo.address();
  proxy = await createFaultProxy({
    targetHost: '127.0.0.1',
    targetPort: typeof address === 'object' && address !== null ? address.port : 0,
  });
});

afterAll(async () => {
  await proxy?.close();
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

/** A client whose received bytes and close reason are recorded. */
async function client(): Promise<{ socket: Socket; received: () => string; closed: Promise<string> }> {
  const socket = connect(proxy.port, '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
  });
  const closed = new Promise<string>((resolve) => {
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    socket.on('close', () => resolve('close'));
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, received: () => text, closed };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, ms = 2000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error('timed out');
    await sleep(10);
  }
}

describe('fault proxy', () => {
  it('passes, then blackholes an open connection, then lets the held bytes through', async () => {
    await proxy.set({ kind: 'pass' });
    const c = await client();
    c.socket.write('one');
    await until(() => c.received() === 'one');
    await proxy.set({ kind: 'blackhole' });
    c.socket.write('two');
    await sleep(200);
    expect(c.received()).toBe('one');
    await proxy.set({ kind: 'pass' });
    await until(() => c.received() === 'onetwo');
    c.socket.destroy();
  });

  it('resets open connections, and refuses new ones until switched back', async () => {
    await proxy.set({ kind: 'pass' });
    const c = await client();
    await proxy.set({ kind: 'reset' });
    expect(await c.closed).toBe('ECONNRESET');
    await proxy.set({ kind: 'refuse' });
    await expect(client()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await proxy.set({ kind: 'pass' });
    const again = await client();
    again.socket.write('back');
    await until(() => again.received() === 'back');
    again.socket.destroy();
  });

  it('adds latency, and drips at the rate asked', async () => {
    await proxy.set({ kind: 'latency', ms: 150 });
    const c = await client();
    const started = performance.now();
    c.socket.write('x');
    await until(() => c.received() === 'x');
    // Both directions wait: 2 × 150 ms.
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);

    await proxy.set({ kind: 'drip', bytesPerSecond: 1000 });
    const dripStarted = performance.now();
    c.socket.write('y'.repeat(500));
    await sleep(250);
    // 100 bytes a tick each way: after ~2 ticks, far from the 500 sent.
    expect(c.received().length).toBeLessThan(1 + 300);
    await until(() => c.received().length === 501, 3000);
    expect(performance.now() - dripStarted).toBeGreaterThanOrEqual(400);
    c.socket.destroy();
  });
});
