// The analytic definition an owner writes (YAML file or owner API): one zod schema used both to
// validate and to generate OpenAPI, plus the SDK's own check of the param schema.
import { checkParamSchema, type ParamSchema } from '@quarry/sdk-connector';
import { z } from 'zod';
import { ParamSpecSchema } from './param-spec-schema.js';

export const ANALYTIC_NAME = /^[a-z0-9][a-z0-9-]{0,62}[a-z0-9]$/;

export const InsightsSchema = z.discriminatedUnion('shape', [
  z.object({ shape: z.literal('single') }).strict(),
  z.object({ shape: z.literal('keyed'), key: z.string().min(1) }).strict(),
  z
    .object({
      shape: z.literal('series'),
      x: z.string().min(1),
      y: z.array(z.string().min(1)).min(1),
      series: z.string().min(1).optional(),
    })
    .strict(),
  z.object({ shape: z.literal('totals'), columns: z.array(z.string().min(1)).min(1) }).strict(),
]);
export type InsightsSpec = z.infer<typeof InsightsSchema>;

export const AnalyticDefinitionSchema = z
  .object({
    name: z.string().regex(ANALYTIC_NAME, 'lowercase letters, digits and dashes, 2–64 characters'),
    title: z.string().min(1).max(200).optional(),
    description: z.string().max(10_000).optional(),
    category: z.string().min(1).max(64).optional(),
    tags: z.array(z.string().min(1).max(32)).max(20).optional(),
    connection: z.string().min(1).max(64),
    sql: z.string().min(1).max(100_000),
    params: z.record(z.string(), ParamSpecSchema).default({}),
    insights: InsightsSchema.optional(),
    cache: z
      .object({
        ttl: z.number().int().min(0).max(86_400).default(0),
        stale: z.number().int().min(0).max(86_400).optional(),
      })
      .strict()
      .optional(),
    limits: z
      .object({
        timeout_ms: z.number().int().min(100).max(600_000).default(30_000),
        // An asynchronous call's time limit (docs/large-results.md), apart from the synchronous
        // one: up to 30 minutes; unset, a job has `timeout_ms` too.
        async_timeout_ms: z.number().int().min(100).max(1_800_000).optional(),
        max_rows: z.number().int().min(1).max(10_000_000).default(10_000),
        // The owner's cost guard on engines that bill by bytes scanned (BigQuery: the job's
        // maximumBytesBilled, never above the connection's own); other engines ignore it.
        max_bytes_billed: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
      })
      .strict()
      .optional(),
    price: z.number().int().min(0).max(1_000_000).default(1),
    visibility: z.enum(['public', 'private', 'shared']).default('private'),
    shared_with: z.array(z.string().min(1)).max(1000).optional(),
    example_params: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export type AnalyticDefinitionInput = z.input<typeof AnalyticDefinitionSchema>;

/** A validated definition, with its param schema checked by the SDK. */
export interface AnalyticDefinition extends Omit<z.output<typeof AnalyticDefinitionSchema>, 'params'> {
  readonly params: ParamSchema;
}

export interface DefinitionProblem {
  readonly field: string;
  readonly message: string;
}

export type DefinitionResult =
  | { readonly ok: true; readonly definition: AnalyticDefinition }
  | { readonly ok: false; readonly problems: readonly DefinitionProblem[] };

/** Validates a definition, listing every problem (schema and params) at once. */
export function parseAnalyticDefinition(input: unknown): DefinitionResult {
  const parsed = AnalyticDefinitionSchema.safeParse(input);
  const problems: DefinitionProblem[] = [];
  const paramProblems: DefinitionProblem[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      (issue.path[0] === 'params' ? paramProblems : problems).push({
        field: issue.path.join('.') || '(root)',
        message: issue.message,
      });
    }
  }
  let params: ParamSchema | undefined;
  const rawParams = parsed.success ? parsed.data.params : (input as { params?: unknown } | null)?.params;
  try {
    params = checkParamSchema(rawParams ?? {});
  } catch (error) {
    // The SDK's words for the params, which say more than the schema's (it checks bounds,
    // defaults and patterns); the schema's only when the SDK found nothing to say.
    paramProblems.length = 0;
    const details = (error as { details?: readonly { param?: string; message: string }[] }).details ?? [];
    if (details.length === 0) problems.push({ field: 'params', message: (error as Error).message });
    for (const d of details)
      problems.push({ field: `params.${d.param ?? ''}`.replace(/\.$/, ''), message: d.message });
  }
  problems.push(...paramProblems);
  // Checked on the raw input too, so it is reported alongside schema problems.
  const raw = (input ?? {}) as { visibility?: unknown; shared_with?: unknown };
  if (raw.visibility === 'shared' && !(Array.isArray(raw.shared_with) && raw.shared_with.length > 0)) {
    problems.push({ field: 'shared_with', message: 'a shared analytic needs at least one account id' });
  }
  if (!parsed.success || params === undefined || problems.length > 0) return { ok: false, problems };
  return { ok: true, definition: { ...parsed.data, params } };
}
