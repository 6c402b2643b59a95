#!/usr/bin/env node
// The `quarry` command. Runs the built CLI from dist/ when there is one; in a checkout without a
// build it registers tsx (with the workspace's `@quarry/source` export condition, so workspace
// packages resolve to their TypeScript sources) and runs src/ directly.
import { existsSync } from 'node:fs';
import { register as registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';

const built = new URL('../dist/cli/run-cli.js', import.meta.url);

async function loadCli() {
  if (existsSync(fileURLToPath(built))) return import(built.href);
  const { register } = await import('tsx/esm/api');
  register();
  // Registered after tsx, so it runs first and hands tsx the extra condition.
  const addSourceCondition = `export async function resolve(specifier, context, next) {
    const conditions = context.conditions.includes('@quarry/source')
      ? context.conditions
      : [...context.conditions, '@quarry/source'];
    return next(specifier, { ...context, conditions });
  }`;
  registerHooks(`data:text/javascript,${encodeURIComponent(addSourceCondition)}`);
  return import(new URL('../src/cli/run-cli.ts', import.meta.url).href);
}

const { runCli, nodeIo } = await loadCli();
process.exitCode = await runCli(process.argv.slice(2), nodeIo());
