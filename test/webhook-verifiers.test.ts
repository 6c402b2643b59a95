// Each official client's webhook verifier (TypeScript, Python, Go, PHP, Ruby; docs/webhooks.md)
// against deliveries signed by the standardwebhooks library itself: a genuine one is accepted
// (also with two signatures, as during a secret rotation), and a changed body, another secret,
// an old timestamp or a missing header are refused. Each language runs its own code in its own
// process. A missing toolchain skips its language loudly, except under CI=true, where it fails.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyWebhook } from '@quarry/client';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { hasTool, VERIFIER_PROGRAMS } from './support/webhook-verifiers.js';

const CI = process.env.CI === 'true';
const secret = `whsec_${randomBytes(24).toString('base64')}`;
const older = `whsec_${randomBytes(24).toString('base64')}`;
const body = JSON.stringify({
  type: 'usage.threshold',
  timestamp: new Date().toISOString(),
  data: { period: '2026-11', threshold_percent: 80, note: 'ünïcode ✓' },
});
const id = 'msg_2lJ8S8fBkW7D8xY3Zq0R1p';

interface Case {
  readonly name: string;
  readonly secret: string;
  readonly body: string;
  readonly headers: Record<string, string>;
  readonly valid: boolean;
}

function signed(at: Date, secrets: readonly string[], text = body): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new StandardWebhook(s).sign(id, at, text)).join(' '),
  };
}

const now = new Date();
const CASES: readonly Case[] = [
  { name: 'genuine', secret, body, headers: signed(now, [secret]), valid: true },
  { name: 'rotation: the new secret', secret, body, headers: signed(now, [older, secret]), valid: true },
  {
    name: 'rotation: the old secret',
    secret: older,
    body,
    headers: signed(now, [secret, older]),
    valid: true,
  },
  {
    name: 'changed body',
    secret,
    body: body.replace('80', '50'),
    headers: signed(now, [secret]),
    valid: false,
  },
  { name: 'another secret', secret: older, body, headers: signed(now, [secret]), valid: false },
  {
    name: 'ten minutes old',
    secret,
    body,
    headers: signed(new Date(now.getTime() - 600_000), [secret]),
    valid: false,
  },
  {
    name: 'no signature header',
    secret,
    body,
    headers: { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)) },
    valid: false,
  },
];

// Every case, given to the program of a language as a JSON file; it prints one verdict a line.
const dir = mkdtempSync(join(tmpdir(), 'quarry-verifiers-'));
const casesFile = join(dir, 'cases.json');
writeFileSync(casesFile, JSON.stringify(CASES));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const expected = CASES.map((c) => (c.valid ? 'ok usage.threshold' : 'refused'));

describe('webhook verifiers of every client, against standardwebhooks signatures', () => {
  it('typescript', async () => {
    const verdicts: string[] = [];
    for (const c of CASES) {
      try {
        const event = await verifyWebhook(c.secret, c.body, c.headers);
        verdicts.push(`ok ${event.type}`);
      } catch {
        verdicts.push('refused');
      }
    }
    expect(verdicts).toEqual(expected);
    // The shape every client offers: Webhook.verify.
    const { Webhook } = await import('@quarry/client');
    expect(await Webhook.verify(secret, body, new Headers(signed(now, [secret])))).toMatchObject({
      type: 'usage.threshold',
    });
  });

  for (const [language, program] of Object.entries(VERIFIER_PROGRAMS)) {
    const missing = !hasTool(program.needs);
    if (missing && !CI)
      console.warn(`\n!!! webhook verifiers: SKIPPING ${language}: ${program.needs} not on PATH !!!\n`);
    it.skipIf(missing && !CI)(
      language,
      () => {
        const result = program.run(casesFile, dir);
        expect(result.status, `${result.stderr}`).toBe(0);
        expect(String(result.stdout).trim().split('\n')).toEqual(expected);
      },
      120_000,
    );
  }
});
