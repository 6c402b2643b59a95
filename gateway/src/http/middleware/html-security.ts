// The headers of every HTML answer the gateway serves (the console at `/`, the API docs at
// `/docs`), in one place: a Content-Security-Policy that runs only the gateway's own script files
// (no inline script, no eval, nothing from another origin: the console works offline), forbids
// framing (`frame-ancestors 'none'`, and X-Frame-Options for old browsers), and sends no
// referrer. `X-Content-Type-Options: nosniff` is set on every answer elsewhere (app.ts).
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.js';

export const HTML_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Adds the HTML security headers to every `text/html` answer. */
export function htmlSecurity(): MiddlewareHandler<AppEnv> {
  return async function htmlSecurityMiddleware(c, next) {
    await next();
    const type = c.res.headers.get('content-type');
    if (type === null || !type.toLowerCase().startsWith('text/html')) return;
    // A page with needs of its own sets its policy itself (/docs: Swagger UI's inline style
    // attributes, routes/docs.ts), as strict on scripts and framing; every other page gets this one.
    if (!c.res.headers.has('content-security-policy')) {
      c.res.headers.set('content-security-policy', HTML_CONTENT_SECURITY_POLICY);
    }
    c.res.headers.set('x-frame-options', 'DENY');
    c.res.headers.set('referrer-policy', 'no-referrer');
  };
}
