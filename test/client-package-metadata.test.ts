// Every official client declares what a package registry shows (description, license, homepage,
// source repository, the language versions it needs) in its own manifest, ships a changelog
// that starts with this release's changes, and the license they all declare is in the
// repository: Apache-2.0 at the root.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/gateway-process.js';

const read = (path: string) => readFile(join(REPO_ROOT, path), 'utf8');

describe('the clients as packages', () => {
  it('the repository holds the Apache-2.0 text every package declares', async () => {
    const license = await read('LICENSE');
    expect(license).toContain('Apache License');
    expect(license).toContain('Version 2.0, January 2004');
    expect(license).toContain('END OF TERMS AND CONDITIONS');
  });

  it('@quarry/client: description, license, homepage, repository, engines', async () => {
    const manifest = JSON.parse(await read('client/package.json')) as Record<string, unknown>;
    expect(manifest.description).toEqual(expect.stringContaining('Quarry'));
    expect(manifest.license).toBe('Apache-2.0');
    expect(manifest.homepage).toMatch(/^https:\/\//);
    expect(manifest.repository).toMatchObject({ type: 'git', directory: 'client' });
    expect(manifest.engines).toMatchObject({ node: expect.stringMatching(/^>=\d+/) });
  });

  it('Python: pyproject.toml', async () => {
    const text = await read('clients/python/pyproject.toml');
    for (const line of [
      /^description = "/m,
      /^license = \{ text = "Apache-2.0" \}/m,
      /^requires-python = ">=3\.\d+"/m,
    ])
      expect(text).toMatch(line);
    expect(text).toMatch(/^\[project\.urls\]\nHomepage = "https:\/\/[^"]+"\nSource = "https:\/\/[^"]+"/m);
  });

  it('PHP: composer.json, with the cURL extension suggested', async () => {
    const manifest = JSON.parse(await read('clients/php/composer.json')) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      license: 'Apache-2.0',
      homepage: expect.stringMatching(/^https:\/\//),
      require: { php: expect.stringMatching(/^>=8\.\d/) },
      suggest: { 'ext-curl': expect.any(String) },
      support: { source: expect.stringMatching(/^https:\/\//) },
    });
    expect(manifest.description).toEqual(expect.stringContaining('Quarry'));
  });

  it('Ruby: the gemspec', async () => {
    const spec = await read('clients/ruby/quarry-client.gemspec');
    for (const line of [
      /spec\.summary = "/,
      /spec\.license = "Apache-2\.0"/,
      /spec\.homepage = "https:\/\//,
      /spec\.required_ruby_version = ">= 3\.\d"/,
      /"source_code_uri" => "https:\/\//,
      /"changelog_uri" => "https:\/\//,
    ])
      expect(spec).toMatch(line);
  });

  it('Go: go.mod and the package doc name the license, homepage and source', async () => {
    const mod = await read('clients/go/go.mod');
    expect(mod).toMatch(/^go 1\.\d+$/m);
    const doc = `${mod}\n${await read('clients/go/client.go')}`;
    for (const word of ['Apache-2.0', 'https://quarry.dev', 'https://github.com/'])
      expect(doc).toContain(word);
  });

  it.each([
    ['client/CHANGELOG.md', 'client/package.json', /"version": "([^"]+)"/],
    ['clients/python/CHANGELOG.md', 'clients/python/pyproject.toml', /^version = "([^"]+)"/m],
    ['clients/go/CHANGELOG.md', 'clients/go/client.go', /quarry-client-go\/([\d.]+)/],
    ['clients/php/CHANGELOG.md', 'clients/php/src/Client.php', /quarry-client-php\/([\d.]+)/],
    ['clients/ruby/CHANGELOG.md', 'clients/ruby/lib/quarry/version.rb', /VERSION = "([^"]+)"/],
  ])(
    '%s: this release, then the current version; the README links it',
    async (changelogPath, versionFile, pattern) => {
      const version = (await read(versionFile)).match(pattern)?.[1];
      expect(version, `no version in ${versionFile}`).toBeDefined();
      const headings = [...(await read(changelogPath)).matchAll(/^## (.+)$/gm)].map((m) => m[1]);
      expect(headings[0]).toBe('Unreleased');
      expect(headings).toContain(version);
      const readme = changelogPath.replace(/CHANGELOG(?=\.md$)/, 'README');
      expect(await read(readme)).toMatch(/\]\(CHANGELOG\.md\)/);
    },
  );
});
