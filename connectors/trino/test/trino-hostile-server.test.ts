// A hostile Trino coordinator (issue 17): the owner's server answers with a `nextUri` on another
// origin, a redirect to another origin, or a page far larger than any result. Before the fix the
// connector followed both to wherever they pointed (the gateway's network, from the gateway) and
// read the whole page. Each "elsewhere" here is a second local server that counts its visitors:
// the connector must fail the query with a clear connector error and never reach it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Connector, createConnector, isConnectorError, parseTemplate } from '@quarry/sdk-connector';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { trinoPlugin } from '../src/index.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function listen(handler: Handler): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

let hostile: { server: Server; port: number };
let elsewhere: { server: Server; port: number };
let visits = 0;
let answer: Handler = (_req, res) => res.end('{}');
const connectors: Connector[] = [];

beforeAll(async () => {
  elsewhere = await listen((req, res) => {
    visits++;
    req.resume();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ id: 'q2', columns: [{ name: 'v', type: 'integer' }], data: [[7]] }));
  });
  hostile = await listen((req, res) => {
    req.resume();
    answer(req, res);
  });
});

afterEach(async () => {
  await Promise.allSettled(connectors.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await Promise.all([hostile, elsewhere].map(({ server }) => new Promise((r) => server.close(r))));
});

async function failedQuery(): Promise<unknown> {
  const connector = await createConnector(trinoPlugin, {
    server: `http://127.0.0.1:${hostile.port}`,
    user: 'quarry',
    connectTimeoutMs: 5_000,
  });
  connectors.push(connector);
  try {
    await connector.query({ template: parseTemplate('SELECT 1 AS v'), params: {}, timeoutMs: 5_000 });
  } catch (error) {
    return error;
  }
  throw new Error('the query succeeded');
}

describe('a hostile Trino coordinator', () => {
  it('cannot send the connector to a nextUri on another origin', async () => {
    answer = (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ id: 'q1', nextUri: `http://localhost:${elsewhere.port}/v1/statement/q1/1` }));
    };
    const before = visits;
    const error = await failedQuery();
    expect(isConnectorError(error)).toBe(true);
    expect(error).toMatchObject({ driverCode: 'NEXT_URI_OFF_ORIGIN' });
    expect(visits).toBe(before);
  });

  it('cannot redirect the connector to another origin', async () => {
    answer = (_req, res) => {
      res.statusCode = 307;
      res.setHeader('location', `http://localhost:${elsewhere.port}/v1/statement`);
      res.end();
    };
    const before = visits;
    expect(isConnectorError(await failedQuery())).toBe(true);
    expect(visits).toBe(before);
  });

  it('cannot make the gateway read a page larger than the response bound', async () => {
    const padding = ' '.repeat(1024 * 1024);
    answer = (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.write('{"id":"q3","data":[[1]],"columns":[{"name":"v","type":"integer"}]');
      // 80 MiB of whitespace inside a valid JSON document: the page parses if it is read whole.
      let sent = 0;
      const more = (): void => {
        while (sent < 80) {
          sent++;
          if (!res.write(padding)) {
            res.once('drain', more);
            return;
          }
        }
        res.end('}');
      };
      res.on('error', () => {});
      more();
    };
    const error = await failedQuery();
    expect(isConnectorError(error)).toBe(true);
    expect(error).toMatchObject({ driverCode: 'RESPONSE_TOO_LARGE' });
  }, 30_000);
});
