// Parsing a token request (RFC 6749 §4.4 client credentials, §2.3.1 client authentication) into
// its grant type, requested scope and client credentials, refusing what the RFC calls a
// malformed request: a body that is not application/x-www-form-urlencoded, a parameter sent
// twice, an undecodable Basic header, or both authentication methods at once.

import { SCOPES, type Scope } from '../auth/principal.js';
import { OAuthError } from './oauth-error.js';

/** How the client authenticated. */
export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post';

export interface ClientCredentials {
  readonly clientId: string;
  readonly secret: string;
  readonly method: ClientAuthMethod;
}

export interface TokenRequest {
  /** `grant_type`, or undefined when absent. */
  readonly grantType: string | undefined;
  /** `scope` as sent, or undefined when absent. */
  readonly scope: string | undefined;
  /** null: the request carries no client authentication. */
  readonly credentials: ClientCredentials | null;
}

export interface RawTokenRequest {
  readonly contentType: string | undefined;
  readonly authorization: string | undefined;
  readonly body: string;
}

const FORM_TYPE = 'application/x-www-form-urlencoded';

const malformed = (description: string) => new OAuthError('invalid_request', description);

/** Decodes one form-urlencoded component (`+` is a space); null when it is not valid. */
function formDecode(text: string): string | null {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return null;
  }
}

/** The credentials of an `Authorization: Basic` header (RFC 6749 §2.3.1: each part form-encoded). */
function parseBasic(authorization: string): ClientCredentials | null {
  const match = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i.exec(authorization);
  if (!match) return null;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  const clientId = formDecode(decoded.slice(0, colon));
  const secret = formDecode(decoded.slice(colon + 1));
  if (clientId === null || secret === null || clientId === '') return null;
  return { clientId, secret, method: 'client_secret_basic' };
}

/** Parses a token request; throws OAuthError (invalid_request or invalid_client) when it is malformed. */
export function parseTokenRequest(raw: RawTokenRequest): TokenRequest {
  const type = raw.contentType?.split(';', 1)[0]?.trim().toLowerCase();
  if (type !== FORM_TYPE) {
    throw malformed(`Send the token request as ${FORM_TYPE}.`);
  }
  const form = new URLSearchParams(raw.body);
  const values = new Map<string, string>();
  for (const [name, value] of form) {
    if (values.has(name)) throw malformed(`The parameter "${name}" is repeated.`);
    values.set(name, value);
  }
  const bodyId = values.get('client_id');
  const bodySecret = values.get('client_secret');
  let credentials: ClientCredentials | null = null;
  if (raw.authorization !== undefined && raw.authorization !== '') {
    if (!/^Basic\s/i.test(raw.authorization)) {
      throw new OAuthError(
        'invalid_client',
        'Authenticate the client with HTTP Basic (client_secret_basic) or client_id and client_secret in the body (client_secret_post).',
      );
    }
    credentials = parseBasic(raw.authorization);
    if (credentials === null) {
      throw malformed('The Basic credentials are malformed: send base64 of "client_id:client_secret".');
    }
    // client_id may be repeated in the body (RFC 6749 §3.2.1) but must then be the same client.
    if (bodySecret !== undefined || (bodyId !== undefined && bodyId !== credentials.clientId)) {
      throw malformed(
        'Use one client authentication method: HTTP Basic or client_secret in the body, not both.',
      );
    }
  } else if (bodyId !== undefined && bodySecret !== undefined) {
    credentials = { clientId: bodyId, secret: bodySecret, method: 'client_secret_post' };
  } else if (bodySecret !== undefined) {
    throw malformed('client_secret was sent without client_id.');
  }
  return { grantType: values.get('grant_type'), scope: values.get('scope'), credentials };
}

/**
 * The scopes a token gets: those requested (space-separated), each of which the client must hold,
 * or all of the client's scopes when none are requested. Throws invalid_scope otherwise.
 */
export function grantedScopes(requested: string | undefined, allowed: readonly string[]): Scope[] {
  const held = SCOPES.filter((s) => allowed.includes(s));
  if (requested === undefined) return held;
  const names = [...new Set(requested.split(' ').filter((s) => s !== ''))];
  if (names.length === 0) throw new OAuthError('invalid_scope', 'The scope parameter is empty.');
  const refused = names.filter((s) => !(held as readonly string[]).includes(s));
  if (refused.length > 0) {
    throw new OAuthError(
      'invalid_scope',
      `This client may not request ${refused.map((s) => `"${s}"`).join(', ')}; its scopes are: ${held.join(' ') || '(none)'}.`,
    );
  }
  return SCOPES.filter((s) => names.includes(s));
}
