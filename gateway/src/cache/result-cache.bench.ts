// Micro-benchmark of the result cache's hot path (run it by hand; it is not a test):
//   npx tsx --conditions=@quarry/source gateway/src/cache/result-cache.bench.ts
// Prints ns per HIT (the get call alone, and awaited as a route would), per cacheKey for a
// typical params set, and per If-None-Match check. Machines here are noisy: run it twice and
// compare within one run only.
import { checkParamSchema, validateParams } from '@quarry/sdk-connector';
import { cacheKey } from './cache-key.js';
import { etagOfJson, matchesIfNoneMatch } from './etag.js';
import { type Answer, answerOf, createResultCache } from './result-cache.js';

const policy = { ttlSeconds: 300, staleSeconds: 60 };
const results = Array.from({ length: 20 }, (_, i) => ({ region: `R${i}`, revenue: 1000 + i }));
const columns = [
  { name: 'region', type: 'string' },
  { name: 'revenue', type: 'number' },
];
const json = JSON.stringify({ source: 'sales-by-region', results, columns });
const etag = etagOfJson(1, json);
const answer: Answer = answerOf(json, etag, Date.now());

function report(label: string, iterations: number, startNs: bigint): void {
  const ns = Number(process.hrtime.bigint() - startNs) / iterations;
  console.log(`${label.padEnd(40)} ${ns.toFixed(0).padStart(6)} ns/op`);
}

async function main(): Promise<void> {
  const cache = createResultCache();
  const keys = Array.from({ length: 10_000 }, (_, i) => `sales:1::"region"string="R${i}","year"integer=2024`);
  for (const key of keys) await cache.get(key, policy, async () => answer);
  const load = async (): Promise<Answer> => answer;
  let sink = 0;

  for (let round = 0; round < 2; round++) {
    const n = 2_000_000;
    let start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) if (cache.get(keys[i % 10_000] as string, policy, load) !== undefined) sink++;
    report('HIT, get() call (10k keys)', n, start);

    // Reference in the same run: a bare Map lookup of the same keys.
    const map = new Map(keys.map((k) => [k, answer]));
    start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) if (map.get(keys[i % 10_000] as string) !== undefined) sink++;
    report('reference: Map.get (10k keys)', n, start);

    start = process.hrtime.bigint();
    for (let i = 0; i < n; i++)
      sink += (await cache.get(keys[i % 10_000] as string, policy, load)).answer.body.length;
    report('HIT, awaited (10k keys)', n, start);

    const schema = checkParamSchema({
      year: { type: 'integer', required: true, min: 2000, max: 2100 },
      region: { type: 'string', pattern: '^[A-Z]{2}$' },
    });
    const validated = validateParams(schema, { year: 2024, region: 'EU' });
    if (!validated.ok) throw new Error('invalid');
    const m = 1_000_000;
    start = process.hrtime.bigint();
    for (let i = 0; i < m; i++)
      sink += cacheKey({ analyticId: 'sales-by-region', version: 1, params: validated.values }).length;
    report('cacheKey (2 params)', m, start);

    // Reference in the same run: the cheapest possible key, JSON of the raw request params.
    const raw = { year: 2024, region: 'EU' };
    start = process.hrtime.bigint();
    for (let i = 0; i < m; i++) sink += JSON.stringify(raw).length;
    report('reference: JSON.stringify(raw params)', m, start);

    start = process.hrtime.bigint();
    for (let i = 0; i < m; i++) if (matchesIfNoneMatch(etag, etag)) sink++;
    report('matchesIfNoneMatch (exact)', m, start);
    console.log('');
  }
  console.log(`stats ${JSON.stringify(cache.stats())} (sink ${sink})`);
}

await main();
