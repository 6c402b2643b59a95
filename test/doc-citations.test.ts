// Every markdown document a source file, test or doc cites must be in the repository: a clone
// has nothing else. The files are the ones git knows (tracked, or new and not ignored); in each,
// anything shaped like a path to a markdown file (`docs/money.md`, `bench/README.md`,
// `../docs/analytic-params.md`, a bare `README.md` or design document) is resolved against the
// repository's root and against the citing file's own folder (relative links in markdown, a
// package's own README); a citation that resolves to neither is listed as `file:line → path`.
// Placeholders (`connectors/<name>/README.md`, `*/README.md`) and URLs are not paths and are
// skipped. No server, no process but one `git ls-files`: it runs in well under a second.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** The kinds of file whose text is read for citations. */
const SCANNED = /\.(ts|tsx|mts|cts|mjs|cjs|md|yaml|yml|json)$/;

/**
 * A path to a markdown file: path segments of word characters, dots and dashes, optionally led by
 * `./` or `../`, ending in `.md`. It must not start inside a longer token (a URL, a scoped package,
 * a placeholder such as `<name>/`), hence the look-behind, nor run on into one (`.mdx`).
 */
const MARKDOWN_PATH = /(?<![\w./:@<>*{}$%~\\-])((?:\.{1,2}\/)*(?:[\w.-]+\/)*[\w.-]+\.md)(?![\w/-])/g;

/** The outside design document cited by its short name and a section sign, or possessive. */
const DESIGN_SHORT = /\bDESIGN(?= §|'s\b)/g;

interface Citation {
  readonly file: string;
  readonly line: number;
  readonly cited: string;
}

function repositoryFiles(): readonly string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return out.split('\0').filter((file) => file !== '');
}

/** Where `cited` may point from `file`: the repository's root, then the file's own folder. */
function candidates(file: string, cited: string): string[] {
  return [posix.normalize(cited), posix.normalize(posix.join(posix.dirname(file), cited))];
}

function missingCitations(): Citation[] {
  const files = repositoryFiles();
  const present = new Set(files);
  const missing: Citation[] = [];
  for (const file of files) {
    if (!SCANNED.test(file) || posix.basename(file) === 'package-lock.json') continue;
    if (file.split('/').includes('node_modules')) continue;
    let text: string;
    try {
      text = readFileSync(`${REPO_ROOT}/${file}`, 'utf8');
    } catch {
      continue; // listed by git but deleted in the working tree: nothing to read
    }
    const lines = text.split('\n');
    for (const [index, line] of lines.entries()) {
      const cites = [
        ...[...line.matchAll(MARKDOWN_PATH)].map((match) => match[1] ?? ''),
        ...[...line.matchAll(DESIGN_SHORT)].map((match) => `${match[0]}.md`),
      ];
      for (const cited of cites) {
        const found = candidates(file, cited).some((path) => !path.startsWith('../') && present.has(path));
        if (!found) missing.push({ file, line: index + 1, cited });
      }
    }
  }
  return missing;
}

describe('citations of documents', () => {
  it('finds the citations it is meant to find, and skips what is not a path', () => {
    const found = (text: string) => [...text.matchAll(MARKDOWN_PATH)].map((match) => match[1]);
    expect(found('see docs/money.md §2, bench/README.md#results and (../docs/mcp.md)')).toEqual([
      'docs/money.md',
      'bench/README.md',
      '../docs/mcp.md',
    ]);
    const design = ['DESIGN', 'md'].join('.');
    expect(found(`the contract (${design} §4); the README.md`)).toEqual([design, 'README.md']);
    const short = (text: string) => [...text.matchAll(DESIGN_SHORT)].length;
    expect(short(`as ${'DESIGN'} §8 says, and ${'DESIGN'}'s table; not DESIGNER §1 or DESIGN alone`)).toBe(2);
    expect(found('connectors/<name>/README.md, */README.md, https://example.com/a/README.md, x.mdx')).toEqual(
      [],
    );
  });

  it('cites only markdown files the repository holds', () => {
    const missing = missingCitations();
    const report = missing.map(({ file, line, cited }) => `${file}:${line} → ${cited}`).join('\n');
    expect(report, `${missing.length} citations of files the repository lacks`).toBe('');
  });
});
