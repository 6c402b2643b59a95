// Sign up and log in with email and password. A sign-up shows the account's first API key once.
import { type FormEvent, useState } from 'react';
import { api } from '../api.js';
import { ErrorNote, Field, SecretOnce } from '../components.js';
import { href, navigateToPath, routeParam } from '../router.js';
import { type Account, type SessionInfo, useSession } from '../session.js';

interface SignUpAnswer {
  readonly account: Account;
  readonly key: { readonly secret: string; readonly prefix: string };
}

export function SignUpPage() {
  const { signedIn } = useSession();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [secret, setSecret] = useState<string>();
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      const answer = await api<SignUpAnswer>('POST', '/v1/accounts', {
        name: String(form.get('name')),
        email: String(form.get('email')),
        password: String(form.get('password')),
      });
      setSecret(answer.key.secret);
      signedIn(await api<SessionInfo>('GET', '/v1/session'));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }
  if (secret !== undefined) {
    return (
      <section aria-labelledby="welcome">
        <h1 id="welcome">Welcome to Quarry</h1>
        <p>Your account is on the Free plan. This is its first API key, with every scope:</p>
        <SecretOnce label="Your API key" secret={secret} />
        <p>
          <a href={href('marketplace')}>Browse the marketplace</a> or{' '}
          <a href={href('keys')}>manage your keys</a>.
        </p>
      </section>
    );
  }
  return (
    <section aria-labelledby="signup" className="narrow">
      <h1 id="signup">Create an account</h1>
      <form onSubmit={submit}>
        <Field label="Name">
          {(id) => <input id={id} name="name" required maxLength={200} autoComplete="name" />}
        </Field>
        <Field label="Email">
          {(id) => <input id={id} name="email" type="email" required maxLength={254} autoComplete="email" />}
        </Field>
        <Field label="Password" hint="At least 10 characters.">
          {(id, hint) => (
            <input
              id={id}
              name="password"
              type="password"
              required
              minLength={10}
              maxLength={200}
              autoComplete="new-password"
              aria-describedby={hint}
            />
          )}
        </Field>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>
          Sign up
        </button>
      </form>
      <p>
        Already have an account? <a href={href('login')}>Log in</a>
      </p>
    </section>
  );
}

export function LogInPage() {
  const { signedIn } = useSession();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      signedIn(
        await api<SessionInfo>('POST', '/v1/session', {
          email: String(form.get('email')),
          password: String(form.get('password')),
        }),
      );
      navigateToPath(routeParam('next'));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }
  return (
    <section aria-labelledby="login" className="narrow">
      <h1 id="login">Log in</h1>
      <form onSubmit={submit}>
        <Field label="Email">
          {(id) => <input id={id} name="email" type="email" required autoComplete="email" />}
        </Field>
        <Field label="Password">
          {(id) => <input id={id} name="password" type="password" required autoComplete="current-password" />}
        </Field>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>
          Log in
        </button>
      </form>
      <p>
        <a href={href('forgot')}>Forgot your password?</a>
      </p>
      <p>
        No account yet? <a href={href('signup')}>Sign up</a>. An account made through the API sets its
        password with a key: <code>PUT /v1/account/password</code> or <code>quarry account password</code>.
      </p>
    </section>
  );
}
