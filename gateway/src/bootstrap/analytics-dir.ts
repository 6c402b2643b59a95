// Loads analytic definitions from a directory of YAML files at start, under one owner. Each file
// is deployed idempotently: unchanged definitions make no new version. A broken file stops the
// start with its name and every problem, rather than serving a partial catalog.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ApiError } from '../http/api-error.js';
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

export async function loadAnalyticsDir(
  dir: string,
  ownerId: string,
  analytics: AnalyticsService,
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
      const { outcome, analytic } = await analytics.deploy(ownerId, doc);
      loaded.push({ file, name: analytic.name, outcome, version: analytic.version });
    } catch (error) {
      if (error instanceof ApiError) {
        const problems = error.details.map((d) => `${d.field ?? d.param ?? ''}: ${d.message}`).join('; ');
        throw new AnalyticsDirError(`${file}: ${problems || error.message}`);
      }
      throw error;
    }
  }
  return loaded;
}
