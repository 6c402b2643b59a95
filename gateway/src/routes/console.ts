// The web console (console/): its index.html at `/` and its content-hashed files under
// `/assets/`, read once from QUARRY_CONSOLE_DIR (built by `npm ci` / `npm start`: see
// docs/console.md). The console is a client of this same API (session cookie, CSRF token), so
// it needs nothing else of the gateway; every instance serves it.
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { ApiError } from '../errors/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import { errorResponse } from '../http/common-schemas.js';
import { pathParam, route } from '../http/route.js';

interface ConsoleFiles {
  readonly index: string;
  readonly assets: ReadonlyMap<string, Buffer>;
}

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** Reads the built console; undefined when it has not been built. */
async function loadConsole(dir: string): Promise<ConsoleFiles | undefined> {
  try {
    const index = await readFile(join(dir, 'index.html'), 'utf8');
    const assets = new Map<string, Buffer>();
    for (const name of await readdir(join(dir, 'assets'))) {
      if (TYPES[extname(name)] !== undefined) assets.set(name, await readFile(join(dir, 'assets', name)));
    }
    return { index, assets };
  } catch {
    return undefined;
  }
}

const notBuilt = () =>
  new ApiError(
    'NOT_FOUND',
    'The web console is not built on this gateway: run `npm run build -w @quarry/console` (npm ci and npm start do it).',
  );

export function registerConsoleRoutes(app: OpenAPIHono<AppEnv>): void {
  let files: Promise<ConsoleFiles | undefined> | undefined;
  const consoleFiles = (dir: string) => {
    files ??= loadConsole(dir).then((loaded) => {
      // Not built yet: look again on the next request instead of remembering the absence.
      if (loaded === undefined) files = undefined;
      return loaded;
    });
    return files;
  };

  route(
    app,
    createRoute({
      method: 'get',
      path: '/',
      tags: ['Console'],
      summary: 'The web console (HTML): sign-up, marketplace with try-it, keys, usage, owner studio',
      responses: {
        200: { description: 'HTML page', content: { 'text/html': { schema: z.string() } } },
        404: errorResponse('The console is not built on this gateway'),
      },
    }),
    async (c) => {
      const loaded = await consoleFiles(c.var.services.config.consoleDir);
      if (loaded === undefined) throw notBuilt();
      c.header('cache-control', 'no-cache');
      return c.html(loaded.index);
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/assets/{file}',
      tags: ['Console'],
      summary: "The web console's scripts and styles (content-hashed names, cached for a year)",
      request: { params: z.object({ file: z.string() }) },
      responses: {
        200: {
          description: 'A file of the console',
          content: { 'text/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } },
        },
        404: errorResponse('No such file'),
      },
    }),
    async (c) => {
      const name = pathParam(c, 'file');
      const loaded = await consoleFiles(c.var.services.config.consoleDir);
      const body = loaded?.assets.get(name);
      if (body === undefined) throw new ApiError('NOT_FOUND', `No console file "${name}".`);
      c.header('content-type', TYPES[extname(name)] as string);
      c.header('cache-control', 'public, max-age=31536000, immutable');
      return c.body(new Uint8Array(body));
    },
  );
}
