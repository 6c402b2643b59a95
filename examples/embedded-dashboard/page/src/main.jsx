// The embedding page: it signs the user in with the site's own backend, then shows the user's
// region's monthly revenue straight from the Quarry gateway, with a token the backend mints. The
// page holds no API key: only short-lived embed tokens, fetched again before they expire.

import { useQuarryQuery } from '@quarry/client/react';
import { useCallback, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';

async function api(path, body) {
  const response = await fetch(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(json.error ?? `HTTP ${response.status}`);
  return json;
}

/** Your backend mints the token; the client asks again shortly before it expires. */
const fetchEmbedToken = () =>
  api('/api/embed-token', {}).then((t) => ({ token: t.token, expiresAt: t.expires_at }));

function Chart({ rows }) {
  const max = Math.max(1, ...rows.map((r) => Number(r.revenue)));
  const width = 40;
  return (
    <svg data-testid="chart" width={rows.length * width + 20} height={220} role="img">
      <title>Revenue per month</title>
      {rows.map((r, i) => {
        const h = Math.round((Number(r.revenue) / max) * 180);
        return (
          <g key={`${r.region}-${r.month}`} data-region={r.region} data-month={r.month}>
            <rect className="bar" x={10 + i * width} y={200 - h} width={width - 8} height={h} />
            <text x={10 + i * width} y={215} fontSize="10">
              {r.month}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

function Dashboard({ me }) {
  const { data, error, loading } = useQuarryQuery(
    { baseUrl: me.gateway, embedToken: fetchEmbedToken },
    me.analytic,
    { year: 2024 },
  );
  return (
    <section>
      <h1>
        Revenue in <span data-testid="region">{me.region}</span>, 2024
      </h1>
      <p>Signed in as {me.user}.</p>
      {loading && <p data-testid="loading">Loading…</p>}
      {error && (
        <p className="error" data-testid="error">
          Could not load the chart: {error.message}
        </p>
      )}
      {data && (
        <>
          <Chart rows={data.results} />
          <p data-testid="regions">{[...new Set(data.results.map((r) => r.region))].join(', ')}</p>
        </>
      )}
    </section>
  );
}

function SignIn({ onSignedIn }) {
  const [user, setUser] = useState('alice');
  const [password, setPassword] = useState('');
  const [failure, setFailure] = useState();
  const submit = useCallback(
    (event) => {
      event.preventDefault();
      api('/api/login', { user, password }).then(onSignedIn, (e) => setFailure(e.message));
    },
    [user, password, onSignedIn],
  );
  return (
    <form onSubmit={submit}>
      <select name="user" value={user} onChange={(e) => setUser(e.target.value)}>
        <option value="alice">alice (EU)</option>
        <option value="bob">bob (NA)</option>
      </select>
      <input name="password" type="password" value={password} onChange={(e) => setPassword(e.target.value)} />
      <button type="submit">Sign in</button>
      {failure && <span className="error">{failure}</span>}
    </form>
  );
}

function App() {
  const [me, setMe] = useState();
  const [checked, setChecked] = useState(false);
  const load = useCallback(
    () =>
      api('/api/me')
        .then(setMe, () => setMe(undefined))
        .finally(() => setChecked(true)),
    [],
  );
  useEffect(() => {
    load();
  }, [load]);
  if (!checked) return null;
  return me ? <Dashboard me={me} /> : <SignIn onSignedIn={load} />;
}

createRoot(document.getElementById('root')).render(<App />);
