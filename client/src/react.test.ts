// @vitest-environment happy-dom
// useQuarryQuery in a DOM environment (happy-dom, whose fetch enforces CORS like a browser)
// against a local server: its states, params compared by value, aborts on change and unmount,
// enabled, refetch and the refresh interval.
// The console object happy-dom was given when the environment started (the test's `console` is
// vitest's own); happy-dom's fetch logs to it like a browser.
import nodeConsole from 'node:console';
import { cleanup, renderHook, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InvalidParamsError } from './errors.js';
import { createQuarryClient, type QuarryClient } from './quarry-client.js';
import { useQuarryQuery } from './react.js';
import {
  envelope,
  queryAnswer,
  startTestServer,
  type TestHandler,
  type TestServer,
} from './testing/test-server.js';
import type { QueryParams } from './types.js';

let server: TestServer | undefined;
/** What reached console.error: happy-dom's fetch logs like a browser (non-2xx answers, aborted requests). */
let consoleErrors: string[] = [];
/** The browser-console lines happy-dom's fetch prints; anything else (a React warning) fails the test. */
const BROWSER_FETCH_LOG = /^(POST|GET) http:\/\/127\.0\.0\.1:\d+\/\S+ \d{3} \(|socket hang up|aborted/;

beforeEach(() => {
  consoleErrors = [];
  const record = (...args: unknown[]) => {
    consoleErrors.push(args.map((a) => (a instanceof Error ? a.message : String(a))).join(' '));
  };
  vi.spyOn(console, 'error').mockImplementation(record);
  vi.spyOn(nodeConsole, 'error').mockImplementation(record);
});
afterEach(async () => {
  cleanup();
  await server?.close();
  server = undefined;
  // Give an aborted request's late socket error the time to be logged (and muted) here.
  await new Promise((resolve) => setTimeout(resolve, 10));
  vi.restoreAllMocks();
  expect(consoleErrors.filter((line) => !BROWSER_FETCH_LOG.test(line))).toEqual([]);
});

async function setup(handler: TestHandler): Promise<{ s: TestServer; client: QuarryClient }> {
  server = await startTestServer(handler, { cors: true });
  const client = createQuarryClient(
    { baseUrl: server.url, apiKey: 'qry_live_test' },
    { retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 } },
  );
  return { s: server, client };
}

/** Rows that name the params of the request they answer. */
const echo: TestHandler = (req) => queryAnswer([{ region: String(JSON.parse(req.body).params.region) }]);

describe('useQuarryQuery', () => {
  it('is loading, then holds the answer', async () => {
    const { client } = await setup(echo);
    const { result } = renderHook(() =>
      useQuarryQuery<{ region: string }>(client, 'sales-by-region', { region: 'EU' }),
    );
    expect(result.current).toMatchObject({ loading: true, data: undefined, error: undefined });
    await waitFor(() => expect(result.current.loading).toBe(false));
    expect(result.current.data?.results[0]?.region).toBe('EU');
    expect(result.current.error).toBeUndefined();
  });

  it('holds a typed error when the gateway refuses the call', async () => {
    const { client } = await setup(() => envelope(400, 'INVALID_PARAMS'));
    const { result } = renderHook(() => useQuarryQuery(client, 'sales-by-region', { year: 'x' }));
    await waitFor(() => expect(result.current.loading).toBe(false));
    expect(result.current.error).toBeInstanceOf(InvalidParamsError);
    expect(result.current.data).toBeUndefined();
  });

  it('compares params by value: an equal new object sends nothing, a change aborts the call in flight', async () => {
    const { s, client } = await setup((req, i) => (i === 0 ? 'hang' : echo(req, i)));
    const { result, rerender } = renderHook(
      ({ params }: { params: QueryParams }) =>
        useQuarryQuery<{ region: string }>(client, 'sales-by-region', params),
      { initialProps: { params: { region: 'EU', year: 2024 } } },
    );
    await s.waitForRequests(1);
    rerender({ params: { year: 2024, region: 'EU' } });
    rerender({ params: { region: 'NA', year: 2024 } });
    await s.waitForClosedHangs(1);
    await waitFor(() => expect(result.current.data?.results[0]?.region).toBe('NA'));
    expect(s.requests).toHaveLength(2);
    expect(result.current.loading).toBe(false);
  });

  it('aborts on unmount and never updates state afterwards', async () => {
    const { s, client } = await setup(() => 'hang');
    const renders = vi.fn();
    const { unmount } = renderHook(() => {
      renders();
      return useQuarryQuery(client, 'sales-by-region', { region: 'EU' });
    });
    await s.waitForRequests(1);
    const before = renders.mock.calls.length;
    unmount();
    await s.waitForClosedHangs(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(renders.mock.calls.length).toBe(before);
  });

  it('waits while not enabled, then queries', async () => {
    const { s, client } = await setup(echo);
    const { result, rerender } = renderHook(
      ({ enabled }: { enabled: boolean }) =>
        useQuarryQuery(client, 'sales-by-region', { region: 'AP' }, { enabled }),
      { initialProps: { enabled: false } },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(result.current).toMatchObject({ loading: false, data: undefined });
    expect(s.requests).toHaveLength(0);
    rerender({ enabled: true });
    await waitFor(() => expect(result.current.data?.results[0]).toEqual({ region: 'AP' }));
    expect(s.requests).toHaveLength(1);
  });

  it('refetch queries again and keeps the last answer while it runs', async () => {
    const { s, client } = await setup((req, i) => (i === 1 ? 'hang' : echo(req, i)));
    const { result } = renderHook(() => useQuarryQuery(client, 'sales-by-region', { region: 'EU' }));
    await waitFor(() => expect(result.current.data).toBeDefined());
    result.current.refetch();
    await s.waitForRequests(2);
    await waitFor(() => expect(result.current.loading).toBe(true));
    expect(result.current.data?.results).toEqual([{ region: 'EU' }]);
    result.current.refetch();
    await s.waitForClosedHangs(1);
    await waitFor(() => expect(result.current.loading).toBe(false));
    expect(s.requests).toHaveLength(3);
  });

  it('refreshes on an interval', async () => {
    const { s, client } = await setup(echo);
    renderHook(() => useQuarryQuery(client, 'sales-by-region', { region: 'EU' }, { refreshIntervalMs: 20 }));
    await s.waitForRequests(3);
    cleanup();
    const seen = s.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(s.requests.length).toBe(seen);
  });
});
