// The API documentation: /docs, the reference the gateway renders from its own OpenAPI document
// (http/docs-page.ts: plain HTML, painted at once, with "Try it"), and /docs/swagger, the full
// Swagger UI explorer from the swagger-ui-dist package the gateway installs. Both are served by the
// gateway itself, so they work with no internet and no CDN, under a Content-Security-Policy with
// no inline script (the pages' scripts of their own are files too).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type OpenAPIHono, z } from '@hono/zod-openapi';
import { ApiError } from '../errors/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import { errorResponse } from '../http/common-schemas.js';
import { type CompressedBody, compressedBody } from '../http/compressed-body.js';
import { DOCS_CSS, DOCS_JS, type DocsDocument, renderDocsPage } from '../http/docs-page.js';
import { operationIdOf } from '../http/operation-ids.js';

/** The files of swagger-ui-dist the page loads; nothing else of the package is served. */
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const packageDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/**
 * Our own start-up script: a file, so the page needs no `unsafe-inline`. Groups start collapsed
 * (rendering every operation of every group is most of the first paint) except the caller's
 * first one, Query, which opens through the deep link `#/Query` unless the address names another.
 */
const INIT_JS = `window.addEventListener('load', function () {
  if (!window.location.hash) window.history.replaceState(null, '', '#/Query');
  window.ui = SwaggerUIBundle({
    url: '/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    docExpansion: 'none',
    defaultModelsExpandDepth: -1,
    filter: true,
  });
});
`;

/**
 * Asset addresses carry this version (swagger-ui-dist's and our script's), so a browser may keep
 * them for a year: an upgrade changes the address.
 */
const ASSET_VERSION = createHash('sha256')
  .update(readFileSync(join(packageDir, 'package.json')))
  .update(INIT_JS)
  .update(DOCS_JS)
  .update(DOCS_CSS)
  .digest('base64url')
  .slice(0, 12);

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Quarry API explorer</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png?v=${ASSET_VERSION}">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css?v=${ASSET_VERSION}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js?v=${ASSET_VERSION}"></script>
<script src="/docs/assets/init.js?v=${ASSET_VERSION}"></script>
</body>
</html>
`;

/**
 * The documentation page's policy: scripts and styles only from this gateway (Swagger UI sets
 * inline style attributes, hence `unsafe-inline` for styles alone), never framed.
 */
export function docsContentSecurityPolicy(publicUrl: string): string {
  const api = new URL(publicUrl).origin;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self' ${api}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const loaded = new Map<string, Promise<CompressedBody>>();

/**
 * A whitelisted asset, read and compressed once on first use and kept (about 1.5 MB in all, a
 * quarter of it compressed).
 */
function asset(name: string): Promise<CompressedBody> {
  let file = loaded.get(name);
  if (file === undefined) {
    const own: Readonly<Record<string, string>> = {
      'init.js': INIT_JS,
      'docs.js': DOCS_JS,
    };
    file = Object.hasOwn(own, name)
      ? Promise.resolve(compressedBody(Buffer.from(own[name] as string)))
      : readFile(join(packageDir, name)).then(compressedBody);
    loaded.set(name, file);
  }
  return file;
}

/**
 * Serves /docs (rendered once from `document`, on first request: it only changes with the route
 * table), /docs/swagger and their assets, and describes them in the OpenAPI document.
 */
export function registerDocsRoutes(
  app: OpenAPIHono<AppEnv>,
  publicUrl: string,
  document: () => DocsDocument,
): { readonly warm: () => Promise<void> } {
  const policy = docsContentSecurityPolicy(publicUrl);
  let reference: CompressedBody | undefined;
  const page = () => {
    reference ??= compressedBody(Buffer.from(renderDocsPage(document(), ASSET_VERSION)));
    return reference;
  };
  app.get('/docs', (c) => {
    return page().respond(c, {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': policy,
      'Cache-Control': 'no-cache',
    });
  });
  app.get('/docs/swagger', (c) => {
    c.header('Content-Security-Policy', policy);
    c.header('Cache-Control', 'no-cache');
    return c.html(PAGE);
  });
  app.get('/docs/assets/:file', async (c) => {
    const name = c.req.param('file');
    const type =
      name === 'init.js' || name === 'docs.js'
        ? 'text/javascript; charset=utf-8'
        : Object.hasOwn(ASSETS, name)
          ? ASSETS[name]
          : undefined;
    if (type === undefined) throw new ApiError('NOT_FOUND', 'No such documentation asset.');
    // A versioned address is immutable; an unversioned one (an old page) is revalidated daily.
    const cache =
      c.req.query('v') === ASSET_VERSION ? 'public, max-age=31536000, immutable' : 'public, max-age=86400';
    return (await asset(name)).respond(c, { 'Content-Type': type, 'Cache-Control': cache });
  });

  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/docs',
    operationId: operationIdOf('get', '/docs'),
    security: [],
    tags: ['Operations'],
    summary: 'The API reference: every operation, the caller\'s first, with "Try it" (served offline)',
    responses: { 200: { description: 'HTML page', content: { 'text/html': { schema: z.string() } } } },
  });
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/docs/swagger',
    operationId: operationIdOf('get', '/docs/swagger'),
    security: [],
    tags: ['Operations'],
    summary: 'The full interactive explorer (Swagger UI, served offline)',
    responses: { 200: { description: 'HTML page', content: { 'text/html': { schema: z.string() } } } },
  });
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/docs/assets/{file}',
    operationId: operationIdOf('get', '/docs/assets/{file}'),
    security: [],
    tags: ['Operations'],
    summary: "The documentation page's scripts and styles",
    request: { params: z.object({ file: z.string() }) },
    responses: {
      200: {
        description: 'A script, stylesheet or icon',
        content: {
          'text/javascript': { schema: z.string() },
          'text/css': { schema: z.string() },
          'image/png': { schema: z.string() },
        },
      },
      404: errorResponse('No such asset'),
    },
  });
  return {
    // The page, the document it is made from, and its brotli variant, made ahead of a first reader.
    warm: () => page().warm(),
  };
}
