#!/usr/bin/env node
// The `quarry` command. In a checkout (tsx installed, as the workspace's dev dependency) it
// registers tsx with the workspace's `@quarry/source` export condition, so workspace packages
// resolve to their TypeScript sources, and runs src/ directly: never a dist/ older than the
// sources. Installed elsewhere (no tsx) it runs the built CLI from dist/, which `npm install`
// builds (the package's `prepare` script).
import { existsSync } from 'node:fs';
import { register as registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';

const built = new URL('../dist/cli/run-cli.js', import.meta.url);

async function loadCli() {
  const source = new URL('../src/cli/run-cli.ts', import.meta.url);
  let tsx;
  try {
    tsx = existsSync(fileURLToPath(source)) ? await import('tsx/esm/api') : undefined;
  } catch {
    tsx = undefined;
  }
  if (tsx === undefined) return import(built.href);
  tsx.register();
  // Registered after tsx, so it runs first and hands tsx the extra condition.
  const addSourceCondition = `export async function resolve(specifier, context, next) {
    const conditions = context.conditions.includes('@quarry/source')
      ? context.conditions
      : [...context.conditions, '@quarry/source'];
    return next(specifier, { ...context, conditions });
  }`;
  registerHooks(`data:text/javascript,${encodeURIComponent(addSourceCondition)}`);
  return import(source.href);
}

const { runCli, nodeIo } = await loadCli();
process.exitCode = await runCli(process.argv.slice(2), nodeIo());
