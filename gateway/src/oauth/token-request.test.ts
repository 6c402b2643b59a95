// Parsing token requests (RFC 6749): the content type, repeated parameters, both client
// authentication methods (and refusing them together), Basic's form-encoding, and scopes.
import { describe, expect, it } from 'vitest';
import { OAuthError } from './oauth-error.js';
import { grantedScopes, parseTokenRequest, type RawTokenRequest } from './token-request.js';

const FORM = 'application/x-www-form-urlencoded';
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

function refusal(raw: RawTokenRequest): { code: string; status: number } {
  try {
    parseTokenRequest(raw);
  } catch (error) {
    if (error instanceof OAuthError) return { code: error.code, status: error.status };
    throw error;
  }
  throw new Error('the request was accepted');
}

describe('parseTokenRequest', () => {
  it('reads client_secret_post credentials, the grant type and the scope', () => {
    const request = parseTokenRequest({
      contentType: `${FORM}; charset=UTF-8`,
      authorization: undefined,
      body: 'grant_type=client_credentials&scope=query+keys&client_id=qci_a&client_secret=qcs_b%2Bc',
    });
    expect(request).toEqual({
      grantType: 'client_credentials',
      scope: 'query keys',
      credentials: { clientId: 'qci_a', secret: 'qcs_b+c', method: 'client_secret_post' },
    });
  });

  it('reads client_secret_basic credentials, each part form-urlencoded (RFC 6749 §2.3.1)', () => {
    const request = parseTokenRequest({
      contentType: FORM,
      authorization: basic('qci_a', 'se:cr+et é'),
      body: 'grant_type=client_credentials',
    });
    expect(request.credentials).toEqual({
      clientId: 'qci_a',
      secret: 'se:cr+et é',
      method: 'client_secret_basic',
    });
    // A `+` in the encoded form is a space.
    const plus = parseTokenRequest({
      contentType: FORM,
      authorization: `Basic ${Buffer.from('qci_a:a+b').toString('base64')}`,
      body: 'grant_type=client_credentials',
    });
    expect(plus.credentials?.secret).toBe('a b');
    // The same client_id may also be in the body.
    const repeated = parseTokenRequest({
      contentType: FORM,
      authorization: basic('qci_a', 's'),
      body: 'grant_type=client_credentials&client_id=qci_a',
    });
    expect(repeated.credentials?.method).toBe('client_secret_basic');
  });

  it('refuses both authentication methods at once', () => {
    expect(
      refusal({
        contentType: FORM,
        authorization: basic('qci_a', 's'),
        body: 'grant_type=client_credentials&client_id=qci_a&client_secret=s',
      }),
    ).toEqual({ code: 'invalid_request', status: 400 });
    expect(
      refusal({
        contentType: FORM,
        authorization: basic('qci_a', 's'),
        body: 'grant_type=client_credentials&client_id=qci_other',
      }),
    ).toEqual({ code: 'invalid_request', status: 400 });
  });

  it('refuses a body that is not form-encoded', () => {
    for (const contentType of [
      undefined,
      'application/json',
      'text/plain',
      'multipart/form-data; boundary=x',
    ]) {
      expect(
        refusal({ contentType, authorization: undefined, body: 'grant_type=client_credentials' }),
      ).toEqual({
        code: 'invalid_request',
        status: 400,
      });
    }
  });

  it('refuses a repeated parameter', () => {
    expect(
      refusal({
        contentType: FORM,
        authorization: undefined,
        body: 'grant_type=client_credentials&scope=query&scope=keys&client_id=a&client_secret=b',
      }),
    ).toEqual({ code: 'invalid_request', status: 400 });
  });

  it('refuses malformed Basic credentials, and other schemes as client authentication', () => {
    for (const authorization of [
      'Basic !!!',
      `Basic ${Buffer.from('no-colon').toString('base64')}`,
      `Basic ${Buffer.from(':secret').toString('base64')}`,
      `Basic ${Buffer.from('qci_a:%E0%A4%A').toString('base64')}`,
    ]) {
      expect(refusal({ contentType: FORM, authorization, body: 'grant_type=client_credentials' })).toEqual({
        code: 'invalid_request',
        status: 400,
      });
    }
    expect(
      refusal({
        contentType: FORM,
        authorization: 'Bearer qry_live_x',
        body: 'grant_type=client_credentials',
      }),
    ).toEqual({ code: 'invalid_client', status: 401 });
  });

  it('reports no credentials when none (or only a client_id) were sent', () => {
    const request = parseTokenRequest({
      contentType: FORM,
      authorization: undefined,
      body: 'grant_type=client_credentials&client_id=qci_a',
    });
    expect(request.credentials).toBeNull();
    expect(refusal({ contentType: FORM, authorization: undefined, body: 'client_secret=s' }).code).toBe(
      'invalid_request',
    );
  });
});

describe('grantedScopes', () => {
  it("defaults to all of the client's scopes, in canonical order", () => {
    expect(grantedScopes(undefined, ['account', 'query'])).toEqual(['query', 'account']);
  });

  it('grants a requested subset and refuses anything beyond it', () => {
    expect(grantedScopes('query', ['query', 'keys'])).toEqual(['query']);
    expect(grantedScopes('keys  query keys', ['query', 'keys'])).toEqual(['query', 'keys']);
    for (const requested of ['owner', 'query admin', '', ' ']) {
      expect(() => grantedScopes(requested, ['query', 'keys'])).toThrowError(
        expect.objectContaining({ code: 'invalid_scope', status: 400 }),
      );
    }
  });
});
