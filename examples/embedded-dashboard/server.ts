// The embedded dashboard's backend (docs/embedding.md): a site with its own users, each allowed
// to see one sales region. It holds the site's Quarry API key (never sent to a browser), signs
// its users in with a cookie, and mints each signed-in user a short-lived embed token that fixes
// `regions` to the user's region and may be used from this site's origin only. The page (page/,
// built with Vite) asks for a token at /api/embed-token and calls the gateway directly with it.
//
//   npm run example:embedded-dashboard     (with the gateway of `npm start` on :8787)
//
// Environment: QUARRY_URL (default http://127.0.0.1:8787), QUARRY_API_KEY (default: a new demo
// account is signed up), PORT (default 5174).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createQuarryClient, signUp } from '@quarry/client';

/** The site's own users: each sees one region of the demo sales. */
export const USERS: Readonly<Record<string, { readonly password: string; readonly region: string }>> = {
  alice: { password: 'alice-demo', region: 'EU' },
  bob: { password: 'bob-demo', region: 'NA' },
};

/** The analytic the page charts: monthly revenue, one series per region. */
export const ANALYTIC = 'monthly-revenue';

export interface DashboardOptions {
  readonly gatewayUrl: string;
  /** The site's API key (`query` scope is enough): it mints tokens and never leaves this process. */
  readonly apiKey: string;
  /** The built page (page/dist). */
  readonly pageDir: string;
  readonly port?: number;
  readonly host?: string;
  /** The origins tokens name (default: this server's own); tests set another to see a refusal. */
  readonly tokenOrigins?: readonly string[];
  /** Seconds a token lives (default 600). */
  readonly tokenSeconds?: number;
}

export interface Dashboard {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 10_000) throw new Error('body too large');
  }
  const value: unknown = text === '' ? {} : JSON.parse(text);
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

const same = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const quarry = createQuarryClient({ baseUrl: options.gatewayUrl, apiKey: options.apiKey });
  const sessions = new Map<string, string>();
  const userOf = (req: IncomingMessage) => {
    const sid = /(?:^|;\s*)sid=([A-Za-z0-9_-]+)/.exec(req.headers.cookie ?? '')?.[1];
    return sid === undefined ? undefined : sessions.get(sid);
  };
  let origin = '';

  const server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (req.method === 'POST' && path === '/api/login') {
        const body = await readBody(req);
        const user = typeof body.user === 'string' ? USERS[body.user] : undefined;
        if (user === undefined || typeof body.password !== 'string' || !same(body.password, user.password)) {
          send(res, 401, { error: 'Unknown user or wrong password.' });
          return;
        }
        const sid = randomBytes(24).toString('base64url');
        sessions.set(sid, body.user as string);
        send(
          res,
          200,
          { user: body.user, region: user.region },
          {
            'set-cookie': `sid=${sid}; HttpOnly; SameSite=Strict; Path=/`,
          },
        );
        return;
      }
      if (path.startsWith('/api/')) {
        const name = userOf(req);
        if (name === undefined) {
          send(res, 401, { error: 'Sign in first.' });
          return;
        }
        const region = USERS[name]?.region as string;
        if (req.method === 'GET' && path === '/api/me') {
          send(res, 200, { user: name, region, gateway: options.gatewayUrl, analytic: ANALYTIC });
          return;
        }
        if (req.method === 'POST' && path === '/api/embed-token') {
          // The user's region is fixed in the token: the page cannot ask for another.
          const token = await quarry.embedTokens.create({
            analytics: [{ name: ANALYTIC, fixed_params: { regions: [region] } }],
            origins: options.tokenOrigins ?? [origin],
            expires_in: options.tokenSeconds ?? 600,
          });
          send(res, 200, { token: token.token, expires_at: token.expires_at });
          return;
        }
        send(res, 404, { error: 'No such API route.' });
        return;
      }
      // The built page; anything else is the page itself (one route).
      const file = normalize(join(options.pageDir, path === '/' ? 'index.html' : path));
      const inside = file.startsWith(normalize(options.pageDir));
      const body = await readFile(inside ? file : join(options.pageDir, 'index.html')).catch(() =>
        readFile(join(options.pageDir, 'index.html')),
      );
      res.writeHead(200, {
        'content-type': TYPES[extname(inside ? file : '.html')] ?? 'application/octet-stream',
      });
      res.end(body);
    })().catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, { error: error instanceof Error ? error.message : String(error) });
      else res.end();
    });
  });
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve),
  );
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  origin = `http://${options.host ?? '127.0.0.1'}:${port}`;
  return {
    url: origin,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Builds the page with Vite into page/dist (the gateway URL is not built in: /api/me tells it). */
export async function buildPage(): Promise<string> {
  const { build } = await import('vite');
  const root = fileURLToPath(new URL('./page/', import.meta.url));
  await build({ configFile: join(root, 'vite.config.ts'), root, logLevel: 'warn' });
  return join(root, 'dist');
}

async function main() {
  const gatewayUrl = process.env.QUARRY_URL ?? 'http://127.0.0.1:8787';
  let apiKey = process.env.QUARRY_API_KEY;
  if (apiKey === undefined) {
    const account = await signUp(gatewayUrl, {
      email: `embedded-dashboard-${Date.now()}@example.com`,
      name: 'Embedded dashboard demo',
    });
    apiKey = account.key.secret;
    console.error(`signed up a demo account (${account.account.id}) at ${gatewayUrl}`);
  }
  const pageDir = await buildPage();
  const dashboard = await startDashboard({
    gatewayUrl,
    apiKey,
    pageDir,
    port: Number(process.env.PORT ?? 5174),
  });
  console.error(`embedded dashboard: ${dashboard.url} (sign in as alice / alice-demo or bob / bob-demo)`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
