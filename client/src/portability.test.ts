// The core client must run wherever fetch does (browsers, workers, Deno, Node): no module of it,
// apart from the CLI and the test helpers, may import a Node module or use a Node-only global.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('.', import.meta.url));
const NODE_ONLY = [
  /from ['"]node:/,
  /from ['"](fs|path|http|https|crypto|os|url|util|stream)['"]/,
  /\bprocess\./,
  /\bBuffer\b/,
  /\brequire\(/,
];

describe('core portability', () => {
  const files = readdirSync(SRC).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));

  it('covers the core modules', () => {
    expect(files).toEqual(
      expect.arrayContaining(['index.ts', 'quarry-client.ts', 'http-transport.ts', 'react.ts']),
    );
  });

  it.each(files)('%s uses only web-standard APIs', (file) => {
    const code = readFileSync(join(SRC, file), 'utf8')
      .split('\n')
      .filter((line) => !line.trimStart().startsWith('//'))
      .join('\n');
    for (const pattern of NODE_ONLY) expect(code, `${file} matches ${pattern}`).not.toMatch(pattern);
  });
});
