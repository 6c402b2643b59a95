// The one config object: timeoutMs and retry beside baseUrl and the credential, unknown keys
// refused, the second argument kept; and what an error says (its code and request id, a proxy's
// HTML page as the upstream family).
import { afterEach, describe, expect, it } from 'vitest';
import { QuarryError, SourceUnavailableError, TimeoutError, UpstreamError } from './errors.js';
import { createQuarryClient, signUp } from './quarry-client.js';
import { envelope, startTestServer, type TestServer } from './testing/test-server.js';

const KEY = 'qry_live_testkey';
let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('one options object', () => {
  it('honours timeoutMs in the config object', async () => {
    server = await startTestServer(() => 'hang');
    const quarry = createQuarryClient({ baseUrl: server.url, apiKey: KEY, timeoutMs: 150 });
    const started = performance.now();
    const error = await failure(quarry.query('sales', {}));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('honours retry in the config object', async () => {
    server = await startTestServer(() => envelope(503, 'SOURCE_UNAVAILABLE'));
    const quarry = createQuarryClient({ baseUrl: server.url, apiKey: KEY, retry: { retries: 0 } });
    expect(await failure(quarry.query('sales', {}))).toBeInstanceOf(SourceUnavailableError);
    expect(server.requests).toHaveLength(1);
  });

  it('still takes the options as a second argument', async () => {
    server = await startTestServer(() => envelope(503, 'SOURCE_UNAVAILABLE'));
    const quarry = createQuarryClient(
      { baseUrl: server.url, apiKey: KEY },
      { retry: { retries: 1, baseDelayMs: 1 } },
    );
    await failure(quarry.query('sales', {}));
    expect(server.requests).toHaveLength(2);
  });

  it('refuses an unknown key with the keys it knows', () => {
    const config = { baseUrl: 'http://127.0.0.1:1', apiKey: KEY, timeout: 5 };
    expect(() => createQuarryClient(config as never)).toThrow(/unknown option "timeout".*timeoutMs/s);
    expect(() =>
      createQuarryClient({ baseUrl: 'http://127.0.0.1:1', apiKey: KEY }, { retries: 2 } as never),
    ).toThrow(/unknown option "retries"/);
    expect(() =>
      createQuarryClient({ baseUrl: 'http://127.0.0.1:1', apiKey: KEY, retry: { retry: 2 } } as never),
    ).toThrow(/unknown retry option "retry".*retries/s);
  });

  it('refuses signUp options it does not know, before sending anything', async () => {
    server = await startTestServer(() => envelope(503, 'SOURCE_UNAVAILABLE'));
    const account = { email: 'a@example.com', name: 'A' };
    expect(() => signUp(server?.url as string, account, { timeout: 5 } as never)).toThrow(
      /signUp: unknown option "timeout".*timeoutMs/s,
    );
    expect(() => signUp(server?.url as string, account, { retry: { retry: 2 } } as never)).toThrow(
      /signUp: unknown retry option "retry"/,
    );
    expect(() => signUp(server?.url as string, account, { timeoutMs: -1 })).toThrow(/signUp: timeoutMs/);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a timeoutMs that is not a positive number', () => {
    expect(() =>
      createQuarryClient({ baseUrl: 'http://127.0.0.1:1', apiKey: KEY, timeoutMs: '5' } as never),
    ).toThrow(/timeoutMs/);
  });
});

describe('what an error says', () => {
  it('names the code and the request id in its message', async () => {
    server = await startTestServer(() => envelope(404, 'SOURCE_NOT_FOUND'));
    const quarry = createQuarryClient({ baseUrl: server.url, apiKey: KEY });
    const error = (await failure(quarry.query('x', {}))) as QuarryError;
    expect(error.message).toContain('SOURCE_NOT_FOUND');
    expect(error.requestId).toBeTruthy();
    expect(error.message).toContain(error.requestId as string);
    expect(error.reason).toBe('SOURCE_NOT_FOUND from the test server');
    expect(String(error)).toBe(`NotFoundError: ${error.message}`);
    expect(String(error).split(error.requestId as string)).toHaveLength(2);
  });

  it.each([
    [502, UpstreamError],
    [503, SourceUnavailableError],
    [504, UpstreamError],
  ] as const)('maps a proxy’s non-JSON %i page to its family, with the status', async (status, Family) => {
    server = await startTestServer(() => ({
      status,
      body: `<html><body><h1>${status} Bad Gateway</h1></body></html>`,
      headers: { 'content-type': 'text/html' },
    }));
    const quarry = createQuarryClient({ baseUrl: server.url, apiKey: KEY, retry: { retries: 0 } });
    const error = (await failure(quarry.query('sales', {}))) as QuarryError;
    expect(error).toBeInstanceOf(Family);
    expect(error.status).toBe(status);
    expect(error.message).toContain(String(status));
  });

  it('keeps a plain QuarryError for other answers that are not JSON', async () => {
    server = await startTestServer(() => ({ status: 500, body: '<html>oops</html>' }));
    const quarry = createQuarryClient({ baseUrl: server.url, apiKey: KEY, retry: { retries: 0 } });
    const error = (await failure(quarry.query('sales', {}))) as QuarryError;
    expect(error.constructor).toBe(QuarryError);
  });
});
