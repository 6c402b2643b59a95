// Cancels a running statement the way libpq's PQcancel does: a CancelRequest (backend pid and
// secret key) on a new connection, which the server acts on before any authentication. Over TLS
// when the session uses TLS, so the secret key never crosses the network in clear.
import pg from 'pg';
import type { PostgresSsl } from './postgres-config.js';

/** Where the session's server is and the key the server gave the session at startup. */
export interface CancelTarget {
  readonly host: string;
  readonly port: number;
  readonly ssl: PostgresSsl;
  readonly processId: number;
  readonly secretKey: number;
}

/** The parts of pg's Connection used here (@types/pg declares neither connect nor cancel). */
interface CancelConnection {
  readonly stream: { destroy(): void };
  connect(port: number | string, host?: string): void;
  requestSsl(): void;
  cancel(processId: number, secretKey: number): void;
  on(event: 'connect' | 'sslconnect' | 'end' | 'error', listener: (error?: unknown) => void): void;
}

/**
 * Sends a CancelRequest and resolves once the server has taken it (it closes the connection after
 * signalling the backend) or after `timeoutMs`. Never rejects: a cancel that cannot be delivered
 * leaves the statement to its server-side statement_timeout.
 */
export function sendCancelRequest(target: CancelTarget, timeoutMs = 5000): Promise<void> {
  return new Promise((resolve) => {
    const ssl = target.ssl === false ? false : { ...target.ssl };
    const connection = new pg.Connection({ ssl }) as unknown as CancelConnection;
    let settled = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      connection.stream.destroy();
      resolve();
    };
    const timer = setTimeout(finish, timeoutMs);
    const send = (): void => connection.cancel(target.processId, target.secretKey);
    connection.on('connect', () => (ssl === false ? send() : connection.requestSsl()));
    connection.on('sslconnect', send);
    connection.on('end', finish);
    connection.on('error', finish);
    if (target.host.startsWith('/')) connection.connect(`${target.host}/.s.PGSQL.${target.port}`);
    else connection.connect(target.port, target.host);
  });
}
