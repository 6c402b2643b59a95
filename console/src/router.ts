// Hash routes (`#/listing/sales-by-region`): the gateway serves one page at `/`, so the console
// needs no server-side route per page and a reload keeps the page.
import { useEffect, useState } from 'react';

/** The route's path segments, decoded: `#/listing/a%20b` → ['listing', 'a b']. */
export function currentRoute(): string[] {
  const path = window.location.hash.replace(/^#\/?/, '').split('?')[0] ?? '';
  return path === '' ? [] : path.split('/').map((part) => decodeURIComponent(part));
}

/** A parameter of the route's query (`#/login?next=%2Fkeys` → next: '/keys'). */
export function routeParam(name: string): string | undefined {
  const query = window.location.hash.split('?')[1];
  return query === undefined ? undefined : (new URLSearchParams(query).get(name) ?? undefined);
}

/** A route as a path (`/statements/2026-11`), to come back to after logging in. */
export function pathOf(route: readonly string[]): string {
  return `/${route.map((part) => encodeURIComponent(part)).join('/')}`;
}

/**
 * Goes to `path` if it is one of the console's own routes (`/keys`, `/statements/2026-11`), else to
 * the marketplace: a `next` from a link someone sent must not lead anywhere else.
 */
export function navigateToPath(path: string | undefined): void {
  if (path !== undefined && /^\/[A-Za-z0-9%._~/-]*$/.test(path) && !path.startsWith('//')) {
    window.location.hash = `#${path}`;
  } else navigate('marketplace');
}

export function useRoute(): string[] {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const onChange = () => {
      setRoute(currentRoute());
      window.scrollTo(0, 0);
    };
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

/** The href of a route. */
export function href(...parts: string[]): string {
  return `#/${parts.map((part) => encodeURIComponent(part)).join('/')}`;
}

export function navigate(...parts: string[]): void {
  window.location.hash = href(...parts);
}
