// The marketplace: search published analytics, filter by category, sort by popular or newest.
import { useEffect, useState } from 'react';
import { api, queryString } from '../api.js';
import { ErrorNote, Field } from '../components.js';
import { href } from '../router.js';

export interface ListingItem {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly category: string;
  readonly tags: readonly string[];
  readonly price: number;
  readonly calls_30d: number;
  readonly callers_30d: number;
  readonly owner: { readonly name: string };
  readonly previews: boolean;
  readonly published_at: string;
}

interface ListingPage {
  readonly items: readonly ListingItem[];
  readonly total: number;
}

export function MarketplacePage() {
  const [q, setQ] = useState('');
  const [category, setCategory] = useState('');
  const [sort, setSort] = useState<'popular' | 'newest'>('popular');
  const [page, setPage] = useState<ListingPage>();
  const [categories, setCategories] = useState<readonly string[]>([]);
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    api<ListingPage>('GET', '/v1/marketplace/listings?limit=100')
      .then((all) => setCategories([...new Set(all.items.map((i) => i.category))].sort()))
      .catch(setError);
  }, []);
  useEffect(() => {
    const controller = new AbortController();
    const timer = setTimeout(() => {
      api<ListingPage>('GET', `/v1/marketplace/listings${queryString({ q, category, sort, limit: 50 })}`)
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
          <p className="hint" aria-live="polite">
            {page.total} {page.total === 1 ? 'analytic' : 'analytics'}
          </p>
          <ul className="cards">
            {page.items.map((item) => (
              <li key={item.name} className="card">
                <h2>
                  <a href={href('listing', item.name)}>{item.title}</a>
                </h2>
                <p className="meta">
                  <code>{item.name}</code> · by {item.owner.name} · {item.category}
                </p>
                <p className="description">{item.description}</p>
                <p className="meta">
                  <strong>
                    {item.price} {item.price === 1 ? 'credit' : 'credits'}
                  </strong>{' '}
                  a call · {item.callers_30d} paying {item.callers_30d === 1 ? 'caller' : 'callers'} in 30
                  days
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
