// The account: its login email and password, changed with the current password; deleting it
// (the email typed back and the password); and, signed out, the forgotten-password flow: ask for
// a link by email, then set a new password with it.
import { type FormEvent, useState } from 'react';
import { api } from '../api.js';
import { ErrorNote, Field } from '../components.js';
import { href, navigate, routeParam } from '../router.js';
import { type Account, type SessionInfo, useSession } from '../session.js';

/** A form that posts its fields, shows the API's error or a success line, and resets. */
function useSubmit(action: (form: FormData) => Promise<string>) {
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const [busy, setBusy] = useState(false);
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const element = event.currentTarget;
    setBusy(true);
    setError(undefined);
    setDone(undefined);
    try {
      setDone(await action(new FormData(element)));
      element.reset();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }
  return { submit, error, done, busy };
}

function Outcome({ error, done }: { readonly error: unknown; readonly done: string | undefined }) {
  return (
    <>
      <ErrorNote error={error} />
      {done === undefined ? null : (
        <p className="ok" role="status">
          {done}
        </p>
      )}
    </>
  );
}

const passwordInput = (name: string, autoComplete: string) => (id: string, hint: string | undefined) => (
  <input
    id={id}
    name={name}
    type="password"
    required
    minLength={name === 'current_password' ? 1 : 10}
    maxLength={200}
    autoComplete={autoComplete}
    aria-describedby={hint}
  />
);

export function AccountPage() {
  const { session, signedIn } = useSession();
  const email = useSubmit(async (form) => {
    const answer = await api<{ account: Account }>('PATCH', '/v1/account', {
      email: String(form.get('email')),
      current_password: String(form.get('current_password')),
    });
    if (session) signedIn({ ...session, account: { ...session.account, ...answer.account } });
    return `You now log in with ${answer.account.email}. Your old address was told.`;
  });
  const password = useSubmit(async (form) => {
    await api('PUT', '/v1/account/password', {
      current_password: String(form.get('current_password')),
      password: String(form.get('password')),
    });
    return 'Password changed. Your other console sessions have ended.';
  });
  if (!session) return null;
  return (
    <section aria-labelledby="account-title" className="narrow">
      <h1 id="account-title">Account</h1>
      <dl className="figures">
        <div>
          <dt>Email</dt>
          <dd data-testid="account-email">{session.account.email}</dd>
        </div>
        <div>
          <dt>Name</dt>
          <dd>{session.account.name}</dd>
        </div>
      </dl>
      <form onSubmit={email.submit} className="panel" aria-labelledby="email-title">
        <h2 id="email-title">Change your login email</h2>
        <Field label="New email">
          {(id) => <input id={id} name="email" type="email" required maxLength={254} autoComplete="email" />}
        </Field>
        <Field label="Current password" hint="Needed to move your login to another address.">
          {passwordInput('current_password', 'current-password')}
        </Field>
        <Outcome error={email.error} done={email.done} />
        <button type="submit" disabled={email.busy}>
          Change email
        </button>
      </form>
      <form onSubmit={password.submit} className="panel" aria-labelledby="password-title">
        <h2 id="password-title">Change your password</h2>
        <Field label="Current password">{passwordInput('current_password', 'current-password')}</Field>
        <Field label="New password" hint="At least 10 characters.">
          {passwordInput('password', 'new-password')}
        </Field>
        <Outcome error={password.error} done={password.done} />
        <button type="submit" disabled={password.busy}>
          Change password
        </button>
      </form>
      <DeleteAccount email={session.account.email} />
    </section>
  );
}

interface AccountDeleted {
  readonly deleted: {
    readonly listings_unpublished: readonly string[];
    readonly subscription_cancelled: boolean;
    readonly unpaid_earnings_usd: number;
  };
}

/** What deleting said, for the page the browser lands on (the session is gone by then). */
const DELETED_NOTE = 'quarry.deleted';

/** Deleting the account: nothing happens until its email is typed back, with the password. */
function DeleteAccount({ email }: { readonly email: string }) {
  const { signOut } = useSession();
  const [typed, setTyped] = useState('');
  const matches = typed.trim().toLowerCase() === email.toLowerCase();
  const remove = useSubmit(async (form) => {
    const answer = await api<AccountDeleted>('DELETE', '/v1/account', {
      confirm: typed.trim(),
      password: String(form.get('password')),
    });
    const { deleted } = answer;
    const notes = [
      deleted.listings_unpublished.length > 0
        ? `${deleted.listings_unpublished.length === 1 ? 'One listing' : `${deleted.listings_unpublished.length} listings`} left the marketplace.`
        : '',
      deleted.subscription_cancelled ? 'Your subscription has ended.' : '',
      deleted.unpaid_earnings_usd > 0
        ? `Your earnings not yet paid out (${deleted.unpaid_earnings_usd.toFixed(2)} USD) are paid at the next monthly close.`
        : '',
    ].filter((n) => n !== '');
    sessionStorage.setItem(DELETED_NOTE, notes.join(' '));
    navigate('deleted');
    await signOut();
    return 'Deleted.';
  });
  return (
    <form onSubmit={remove.submit} className="panel danger-zone" aria-labelledby="delete-title">
      <h2 id="delete-title">Delete your account</h2>
      <p>This cannot be undone. At once:</p>
      <ul>
        <li>every API key, OAuth client and console session stops working;</li>
        <li>your listings leave the marketplace and your analytics stop answering anyone;</li>
        <li>your connections are deleted with their credentials;</li>
        <li>a paid subscription ends (the month paid for is not refunded);</li>
        <li>your email is free to sign up again, as a new account.</li>
      </ul>
      <p>
        Kept: your usage and statements. Earnings not yet paid out are paid at the next monthly close,
        whatever the minimum, and Pay as you Go usage is invoiced to your card as usual.
      </p>
      <Field label="Type your email to confirm" hint={`Type ${email}`}>
        {(id, hint) => (
          <input
            id={id}
            name="confirm"
            type="email"
            required
            autoComplete="off"
            value={typed}
            onChange={(event) => setTyped(event.target.value)}
            aria-describedby={hint}
          />
        )}
      </Field>
      <Field label="Password">{passwordInput('password', 'current-password')}</Field>
      <Outcome error={remove.error} done={undefined} />
      <button type="submit" className="danger" disabled={!matches || remove.busy}>
        Delete my account
      </button>
    </form>
  );
}

/** Where the browser lands once the account is deleted. */
export function AccountDeletedPage() {
  const [note] = useState(() => sessionStorage.getItem(DELETED_NOTE) ?? '');
  return (
    <section aria-labelledby="deleted-title" className="narrow">
      <h1 id="deleted-title">Your account is deleted</h1>
      <p role="status">Its keys, sessions and listings have ended.{note === '' ? '' : ` ${note}`}</p>
      <p>
        <a href={href('marketplace')}>Back to the marketplace</a> or{' '}
        <a href={href('signup')}>sign up again</a>.
      </p>
    </section>
  );
}

export function ForgotPasswordPage() {
  const ask = useSubmit(async (form) => {
    const answer = await api<{ message: string }>('POST', '/v1/password-resets', {
      email: String(form.get('email')),
    });
    return answer.message;
  });
  return (
    <section aria-labelledby="forgot-title" className="narrow">
      <h1 id="forgot-title">Forgot your password?</h1>
      <p>We send a link to set a new one to your account's email. It works once, for 30 minutes.</p>
      <form onSubmit={ask.submit}>
        <Field label="Email">
          {(id) => <input id={id} name="email" type="email" required maxLength={254} autoComplete="email" />}
        </Field>
        <Outcome error={ask.error} done={ask.done} />
        <button type="submit" disabled={ask.busy}>
          Send the link
        </button>
      </form>
      <p>
        <a href={href('login')}>Back to log in</a>
      </p>
    </section>
  );
}

export function ResetPasswordPage() {
  const token = routeParam('token') ?? '';
  const reset = useSubmit(async (form) => {
    await api<SessionInfo>('POST', '/v1/password-resets/confirm', {
      token,
      password: String(form.get('password')),
    });
    return 'Your new password is set.';
  });
  return (
    <section aria-labelledby="reset-title" className="narrow">
      <h1 id="reset-title">Set a new password</h1>
      {reset.done === undefined ? (
        <form onSubmit={reset.submit}>
          <Field label="New password" hint="At least 10 characters. Every session of the account ends.">
            {passwordInput('password', 'new-password')}
          </Field>
          <ErrorNote error={reset.error} />
          <button type="submit" disabled={reset.busy}>
            Set password
          </button>
        </form>
      ) : (
        <p className="ok" role="status">
          {reset.done} <a href={href('login')}>Log in</a>.
        </p>
      )}
    </section>
  );
}
