// OpenAPI schemas and JSON shapes the money routes share (usage, statements, budget): amounts
// are exact integers (millicredits, micro-USD) next to their display form (credits, USD).
import { z } from '@hono/zod-openapi';
import { microUsdToUsd } from '../money/units.js';

/** Micro-USD as a USD number (display; the `*_micro_usd` field next to it is exact). */
export const usd = microUsdToUsd;

export const CallsByOriginSchema = z
  .object({
    paid: z.number().int().openapi({ description: 'Calls that spent paid credits' }),
    free: z.number().int().openapi({ description: 'Calls that spent Free-plan credits (worth 0 USD)' }),
    marketplace: z.number().int().openapi({ description: 'Marketplace previews (try-tokens): 0 credits' }),
    owner: z
      .number()
      .int()
      .openapi({ description: "An owner's calls of its own analytics: free, earn nothing" }),
  })
  .openapi('CallsByOrigin');

export const BudgetStateSchema = z
  .object({
    budget_usd: z.number(),
    spent_usd: z.number().openapi({ description: 'This period, calls in flight included' }),
    left_usd: z.number(),
    budget_micro_usd: z.number().int(),
    spent_micro_usd: z.number().int(),
    left_micro_usd: z.number().int(),
  })
  .openapi('BudgetState');

export function budgetJson(b: { readonly budgetMicroUsd: number; readonly spentMicroUsd: number }) {
  const left = Math.max(0, b.budgetMicroUsd - b.spentMicroUsd);
  return {
    budget_usd: usd(b.budgetMicroUsd),
    spent_usd: usd(b.spentMicroUsd),
    left_usd: usd(left),
    budget_micro_usd: b.budgetMicroUsd,
    spent_micro_usd: b.spentMicroUsd,
    left_micro_usd: left,
  };
}
