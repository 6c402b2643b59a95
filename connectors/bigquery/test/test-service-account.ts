// Test code: a service account made up for one test run. Its RSA key pair is generated here, so
// the key file can point `token_uri` at a fake token endpoint and that endpoint can verify the
// assertions signed with it.
import { generateKeyPairSync } from 'node:crypto';

/** A generated service account: its key file (as Google issues them) and its public key. */
export interface TestServiceAccount {
  readonly email: string;
  /** The key file's JSON fields. */
  readonly keyFile: Readonly<Record<string, string>>;
  readonly publicKeyPem: string;
}

/** A service account whose key file sends token requests to `tokenUri`. */
export function createTestServiceAccount(
  tokenUri: string,
  email = 'quarry-test@quarry-test.iam.gserviceaccount.com',
): TestServiceAccount {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    email,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    keyFile: {
      type: 'service_account',
      project_id: 'quarry-test',
      private_key_id: 'test-key-1',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: email,
      client_id: '100000000000000000001',
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: tokenUri,
      universe_domain: 'googleapis.com',
    },
  };
}
