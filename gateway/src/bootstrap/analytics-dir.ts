// Loads analytic definitions from a directory of YAML files at start, under one owner. Each file
// is deployed idempotently: unchanged definitions make no new version; their SQL is not checked
// against the warehouse (the demo warehouse may still be being seeded). A broken file stops the
// start with its name and every problem, rather than serving a partial catalog.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ApiError } from '../errors/api-error.js';
import type { AnalyticsService, DeployOutcome } from '../services/analytics-service.js';

export interface LoadedAnalytic {
  readonly file: string;
  readonly name: string;
  readonly outcome: DeployOutcome;
  readonly version: number;
}

export class AnalyticsDirError extends Error {
  override readonly name = 'AnalyticsDirError';
}

export interface LoadAnalyticsDirOptions {
  /**
   * Skip (rather than fail on) definitions whose connection the owner has not created yet:
   * outside the demo, connections are made through the owner API after the first start.
   */
  readonly skipMissingConnections?: boolean;
  readonly onSkip?: (file: string, reason: string) => void;
}

export async function loadAnalyticsDir(
  dir: string,
  ownerId: string,
  analytics: AnalyticsService,
  options: LoadAnalyticsDirOptions = {},
): Promise<readonly LoadedAnalytic[]> {
  const files = (await readdir(dir)).filter((f) => /\.ya?ml$/i.test(f)).sort();
  const loaded: LoadedAnalytic[] = [];
  for (const file of files) {
    let doc: unknown;
    try {
      doc = parseYaml(await readFile(join(dir, file), 'utf8'));
    } catch (error) {
      throw new AnalyticsDirError(`${file}: not valid YAML: ${(error as Error).message}`);
    }
    try {
      const { outcome, analytic } = await analytics.deploy(ownerId, doc, { checkSql: false });
      loaded.push({ file, name: analytic.name, outcome, version: analytic.version });
    } catch (error) {
      if (error instanceof ApiError) {
        const missingConnection =
          error.details.length === 1 &&
          error.details[0]?.field === 'connection' &&
          /no connection named/.test(error.details[0].message);
        if (missingConnection && options.skipMissingConnections) {
          options.onSkip?.(file, error.details[0]?.message ?? '');
          continue;
        }
        const problems = error.details.map((d) => `${d.field ?? d.param ?? ''}: ${d.message}`).join('; ');
        throw new AnalyticsDirError(`${file}: ${problems || error.message}`);
      }
      throw error;
    }
  }
  return loaded;
}
