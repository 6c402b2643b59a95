// Hash routes (`#/listing/sales-by-region`): the gateway serves one page at `/`, so the console
// needs no server-side route per page and a reload keeps the page.
import { useEffect, useState } from 'react';

/** The route's path segments, decoded: `#/listing/a%20b` → ['listing', 'a b']. */
export function currentRoute(): string[] {
  const path = window.location.hash.replace(/^#\/?/, '').split('?')[0] ?? '';
  return path === '' ? [] : path.split('/').map((part) => decodeURIComponent(part));
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
