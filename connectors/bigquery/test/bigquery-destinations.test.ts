// BigQuery and the gateway host (issue 17): the gateway's own cloud identity (application-default
// credentials) needs QUARRY_ALLOW_HOST_IDENTITY and, even then, its tokens go to Google's API
// only (before the fix an owner-chosen apiEndpoint received them), and the endpoints a connection
// names are checked by the destination guard before any request.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConnector, isDestinationRefusal, PUBLIC_ONLY } from '@quarry/sdk-connector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bigqueryPlugin } from '../src/index.js';
import { createTestServiceAccount } from './test-service-account.js';

let server: Server;
let port = 0;
let hits = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    req.resume();
    res.statusCode = 500;
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('bigquery destinations', () => {
  it("never sends the gateway's own credentials to an endpoint other than Google's", () => {
    const parsed = bigqueryPlugin.configSchema.safeParse({
      projectId: 'my-project-1',
      applicationDefaultCredentials: true,
      apiEndpoint: 'https://bigquery.attacker.example',
    });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain('apiEndpoint');
  });

  it('declares the API endpoint, the token endpoint and the host identity', () => {
    const adc = bigqueryPlugin.configSchema.parse({
      projectId: 'my-project-1',
      applicationDefaultCredentials: true,
    });
    expect(bigqueryPlugin.destinations?.(adc)).toEqual([
      { kind: 'url', url: 'https://bigquery.googleapis.com' },
      { kind: 'identity', what: 'BigQuery application-default credentials' },
    ]);
  });

  it('reaches no loopback endpoint when private networks are off', async () => {
    const key = createTestServiceAccount(`http://127.0.0.1:${port}/token`).keyFile;
    const connector = await createConnector(
      bigqueryPlugin,
      { projectId: 'my-project-1', credentials: key, apiEndpoint: `http://127.0.0.1:${port}`, maxRetries: 0 },
      { destinations: PUBLIC_ONLY },
    );
    try {
      const before = hits;
      expect(isDestinationRefusal(await connector.test().catch((e: unknown) => e))).toBe(true);
      expect(hits).toBe(before);
    } finally {
      await connector.close();
    }
  });

  it('opens no application-default session without the host identity switch', async () => {
    const connector = await createConnector(
      bigqueryPlugin,
      { projectId: 'my-project-1', applicationDefaultCredentials: true },
      { destinations: { ...PUBLIC_ONLY, privateNetworks: true, hostFiles: true } },
    ).catch((e: unknown) => e);
    const error =
      connector instanceof Error
        ? connector
        : await (connector as { test(): Promise<void> }).test().catch((e: unknown) => e);
    expect(isDestinationRefusal(error)).toBe(true);
  });
});
