// Who is signed in: the session the gateway knows (`GET /v1/session`), shared with every page.
import { createContext, type ReactNode, useCallback, useContext, useEffect, useState } from 'react';
import { ApiFailure, api, setCsrfToken } from './api.js';

export interface Account {
  readonly id: string;
  readonly email: string;
  readonly name: string;
  readonly plan: string;
}

export interface SessionInfo {
  readonly account: Account;
  readonly csrf_token: string;
  readonly expires_at: string;
}

interface SessionState {
  /** undefined while loading; null when signed out. */
  readonly session: SessionInfo | null | undefined;
  readonly signedIn: (session: SessionInfo) => void;
  readonly signOut: () => Promise<void>;
}

const SessionContext = createContext<SessionState>({
  session: undefined,
  signedIn: () => {},
  signOut: async () => {},
});

export function SessionProvider({ children }: { readonly children: ReactNode }) {
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  useEffect(() => {
    api<SessionInfo>('GET', '/v1/session')
      .then((s) => {
        setCsrfToken(s.csrf_token);
        setSession(s);
      })
      .catch((error: unknown) => {
        if (!(error instanceof ApiFailure)) console.error(error);
        setSession(null);
      });
  }, []);
  const signedIn = useCallback((s: SessionInfo) => {
    setCsrfToken(s.csrf_token);
    setSession(s);
  }, []);
  // Signed out only once the gateway ended the session (or it had already ended): a failed
  // logout must not look like one.
  const signOut = useCallback(async () => {
    try {
      await api('DELETE', '/v1/session');
    } catch (error) {
      if (!(error instanceof ApiFailure && error.status === 401)) throw error;
    }
    setCsrfToken(undefined);
    setSession(null);
  }, []);
  return <SessionContext.Provider value={{ session, signedIn, signOut }}>{children}</SessionContext.Provider>;
}

export const useSession = () => useContext(SessionContext);
