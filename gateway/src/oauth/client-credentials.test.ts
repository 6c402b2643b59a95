// Client identifiers and secrets: their shapes, uniqueness, and the digest comparison that
// accepts exactly the right secret and never accepts anything for an unknown client.
import { describe, expect, it } from 'vitest';
import { digestKey } from '../security/api-key.js';
import { generateClientCredentials, isClientIdShaped, secretMatches } from './client-credentials.js';

describe('client credentials', () => {
  it('have distinct prefixes, fixed shapes and a digest of the secret', () => {
    const generated = generateClientCredentials();
    expect(generated.id).toMatch(/^ocl_[0-9A-Za-z]{22}$/);
    expect(generated.clientId).toMatch(/^qci_[0-9A-Za-z]{22}$/);
    expect(generated.secret).toMatch(/^qcs_[0-9A-Za-z]{43}$/);
    expect(generated.secretDigest.equals(digestKey(generated.secret))).toBe(true);
    expect(isClientIdShaped(generated.clientId)).toBe(true);
    const many = Array.from({ length: 200 }, () => generateClientCredentials());
    expect(new Set(many.map((c) => c.secret)).size).toBe(200);
    expect(new Set(many.map((c) => c.clientId)).size).toBe(200);
  });

  it('recognise only client_id-shaped text', () => {
    for (const text of [
      '',
      'qci_',
      'qci_short',
      `qci_${'a'.repeat(23)}`,
      `qcs_${'a'.repeat(22)}`,
      `qci_${'-'.repeat(22)}`,
    ]) {
      expect(isClientIdShaped(text)).toBe(false);
    }
  });

  it('match exactly the right secret', () => {
    const { secret, secretDigest } = generateClientCredentials();
    expect(secretMatches(secret, secretDigest)).toBe(true);
    expect(secretMatches(`${secret}x`, secretDigest)).toBe(false);
    expect(secretMatches(secret.slice(0, -1), secretDigest)).toBe(false);
    expect(secretMatches('', secretDigest)).toBe(false);
  });

  it('never match for an unknown client, whatever the secret', () => {
    expect(secretMatches('qcs_decoy', null)).toBe(false);
    expect(secretMatches(generateClientCredentials().secret, null)).toBe(false);
  });
});
