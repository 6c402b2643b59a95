// The marketplace: search published analytics, filter by category, sort by popular or newest.
import type { Listing, ListingSearch } from '@quarry/client';
import { useEffect, useState } from 'react';
import { api, queryString } from '../api.js';
import { ErrorNote, Field, Markdown, plural } from '../components.js';
import { href } from '../router.js';

/** A listing as the marketplace answers it (the client's own type). */
export type ListingItem = Listing;

/**
 * The categories to filter by, one per name whatever its case ("Sales" and "sales" are one: the
 * search matches categories case-insensitively), spelled as most listings spell it.
 */
export function categoriesOf(items: readonly Pick<ListingItem, 'category'>[]): string[] {
  const spellings = new Map<string, Map<string, number>>();
  for (const { category } of items) {
    const key = category.toLowerCase();
    const counts = spellings.get(key) ?? new Map<string, number>();
    counts.set(category, (counts.get(category) ?? 0) + 1);
    spellings.set(key, counts);
  }
  const chosen = [...spellings.values()].map(
    (counts) => [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? '',
  );
  return chosen.sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' }));
}

/** What an empty search says, and what to try instead. */
function nothingFound(q: string, category: string): string {
  const what = [q === '' ? undefined : `“${q}”`, category === '' ? undefined : `in ${category}`]
    .filter((part) => part !== undefined)
    .join(' ');
  return what === ''
    ? 'No analytics are listed yet.'
    : `No analytics match ${what}. Try fewer or other words, or every category.`;
}

export function MarketplacePage() {
  const [q, setQ] = useState('');
  const [category, setCategory] = useState('');
  const [sort, setSort] = useState<'popular' | 'newest'>('popular');
  const [page, setPage] = useState<ListingSearch>();
  const [categories, setCategories] = useState<readonly string[]>([]);
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    api<ListingSearch>('GET', '/v1/marketplace/listings?limit=100')
      .then((all) => setCategories(categoriesOf(all.items)))
      .catch(setError);
  }, []);
  useEffect(() => {
    const controller = new AbortController();
    const timer = setTimeout(() => {
      api<ListingSearch>('GET', `/v1/marketplace/listings${queryString({ q, category, sort, limit: 50 })}`)
        .then((p) => {
          if (!controller.signal.aborted) {
            setPage(p);
            setError(undefined);
          }
        })
        .catch(setError);
    }, 150);
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [q, category, sort]);

  return (
    <section aria-labelledby="market">
      <h1 id="market">Marketplace</h1>
      <search>
        <form className="filters" onSubmit={(e) => e.preventDefault()}>
          <Field label="Search">
            {(id) => (
              <input
                id={id}
                type="search"
                value={q}
                onChange={(e) => setQ(e.target.value)}
                placeholder="revenue, region…"
              />
            )}
          </Field>
          <Field label="Category">
            {(id) => (
              <select id={id} value={category} onChange={(e) => setCategory(e.target.value)}>
                <option value="">All categories</option>
                {categories.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Sort by">
            {(id) => (
              <select id={id} value={sort} onChange={(e) => setSort(e.target.value as 'popular' | 'newest')}>
                <option value="popular">Most popular</option>
                <option value="newest">Newest</option>
              </select>
            )}
          </Field>
        </form>
      </search>
      <ErrorNote error={error} />
      {page === undefined ? (
        <p>Loading…</p>
      ) : (
        <>
          <p className="hint" aria-live="polite" data-testid="result-count">
            {page.total === 0 ? nothingFound(q, category) : plural(page.total, 'analytic')}
          </p>
          {page.total === 0 && (q !== '' || category !== '') ? (
            <p>
              <button
                type="button"
                className="secondary"
                onClick={() => {
                  setQ('');
                  setCategory('');
                }}
              >
                Show every analytic
              </button>
            </p>
          ) : null}
          <ul className="cards">
            {page.items.map((item) => (
              <li key={item.name} className="card">
                <h2>
                  <a href={href('listing', item.name)}>{item.title}</a>
                </h2>
                <p className="meta">
                  <code>{item.name}</code> · by {item.owner.name} · {item.category}
                </p>
                <div className="description">
                  <Markdown text={item.description} />
                </div>
                <p className="meta">
                  <strong>{plural(item.price, 'credit')}</strong> a call ·{' '}
                  {plural(item.callers_30d, 'paying caller')} in 30 days
                  {item.previews ? ' · free preview' : ''}
                </p>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
