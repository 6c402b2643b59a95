// docs/deploy.md as the deployment tests read it: the guide's own HAProxy configuration and node
// command line, with the few values a test must change (listen address, admin socket, the
// servers' addresses) replaced where the guide has them, so the guide and the test cannot drift.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from './gateway-process.js';

/** The operator's guide the deployment tests follow. */
export const DEPLOY_GUIDE = join(REPO_ROOT, 'docs/deploy.md');

/** The fenced blocks of a Markdown text with the given info string (` ```haproxy `, ` ```sh `). */
export function fencedBlocks(markdown: string, info: string): string[] {
  const blocks: string[] = [];
  const fence = new RegExp(`^\`\`\`${info}\\n([\\s\\S]*?)^\`\`\`$`, 'gm');
  for (const match of markdown.matchAll(fence)) blocks.push(match[1] ?? '');
  return blocks;
}

/**
 * The guide's one ```haproxy block with each `[from, to]` replaced. Every `from` must occur in it
 * exactly once: a guide that changed shape fails the test instead of being half-followed.
 */
export async function guideHaproxyConfig(
  replacements: readonly (readonly [string, string])[],
): Promise<string> {
  const blocks = fencedBlocks(await readFile(DEPLOY_GUIDE, 'utf8'), 'haproxy');
  if (blocks.length !== 1) throw new Error(`docs/deploy.md has ${blocks.length} haproxy blocks, not 1`);
  let config = blocks[0] as string;
  for (const [from, to] of replacements) {
    const count = config.split(from).length - 1;
    if (count !== 1)
      throw new Error(`docs/deploy.md's HAProxy config has "${from}" ${count} times, not once`);
    config = config.replace(from, to);
  }
  return config;
}

/** The flags of the guide's `node … gateway/dist/server.js` command line. */
export async function guideNodeFlags(): Promise<string[]> {
  const lines = fencedBlocks(await readFile(DEPLOY_GUIDE, 'utf8'), 'sh').flatMap((block) =>
    block.split('\n'),
  );
  // The line may set the environment first (`UV_THREADPOOL_SIZE=5 node …`): the gateway's
  // processes here get the same from test/support/gateway-process.ts.
  const start = lines
    .map((l) => l.trim())
    .filter((l) => /^(?:[A-Z_][A-Z0-9_]*=\S+\s+)*node .* gateway\/dist\/server\.js$/.test(l));
  if (start.length !== 1) throw new Error(`docs/deploy.md has ${start.length} node command lines, not 1`);
  const words = (start[0] as string).split(/\s+/).filter((w) => !/^[A-Z_][A-Z0-9_]*=/.test(w));
  return words.slice(1, -1);
}
