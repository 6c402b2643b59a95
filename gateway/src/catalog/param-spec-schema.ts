// The param declarations of an analytic definition (`params:`) as zod schemas, one per type, so
// the OpenAPI document types them (what each type takes, its bounds). The SDK's checkParamSchema
// stays the authority that validates them (RE2 patterns, defaults inside bounds, pattern work):
// parseAnalyticDefinition reports its problems rather than these schemas' when both object.
import { z } from 'zod';

const common = {
  required: z.boolean().optional().meta({ description: 'The caller must give it (moot with a default)' }),
  description: z.string().optional().meta({ description: 'Shown on the marketplace and in the docs' }),
};
const bound = z.union([z.number(), z.string()]);

const IntegerParam = z
  .object({
    type: z.literal('integer'),
    ...common,
    default: z.number().int().optional(),
    min: z.number().optional(),
    max: z.number().optional(),
  })
  .strict();
const NumberParam = z
  .object({
    type: z.literal('number'),
    ...common,
    default: z.number().optional(),
    min: z.number().optional(),
    max: z.number().optional(),
  })
  .strict();
const StringParam = z
  .object({
    type: z.literal('string'),
    ...common,
    default: z.string().optional(),
    pattern: z.string().max(512).optional().meta({
      description: 'RE2 syntax, matched against the whole value (no lookaround, no backreferences)',
    }),
    minLength: z.number().int().min(0).optional(),
    maxLength: z.number().int().min(1).max(4096).optional().meta({ description: 'Default 1,000' }),
  })
  .strict();
const BooleanParam = z
  .object({ type: z.literal('boolean'), ...common, default: z.boolean().optional() })
  .strict();
const DateParam = z
  .object({
    type: z.literal('date'),
    ...common,
    default: z.string().optional().meta({ description: '`YYYY-MM-DD`' }),
    min: bound.optional(),
    max: bound.optional(),
  })
  .strict();
const TimestampParam = z
  .object({
    type: z.literal('timestamp'),
    ...common,
    default: z.string().optional().meta({ description: 'ISO-8601' }),
    min: bound.optional(),
    max: bound.optional(),
  })
  .strict();
const EnumParam = z
  .object({
    type: z.literal('enum'),
    ...common,
    default: z.string().optional(),
    values: z.array(z.string()).min(1),
  })
  .strict();

/** An array's element: a scalar declaration without `required` or `default`. */
const ItemSpecSchema = z
  .discriminatedUnion('type', [
    IntegerParam.omit({ required: true, default: true }),
    NumberParam.omit({ required: true, default: true }),
    StringParam.omit({ required: true, default: true }),
    BooleanParam.omit({ required: true, default: true }),
    DateParam.omit({ required: true, default: true }),
    TimestampParam.omit({ required: true, default: true }),
    EnumParam.omit({ required: true, default: true }),
  ])
  .meta({ id: 'ParamItemSpec' });

const ArrayParam = z
  .object({
    type: z.literal('array'),
    ...common,
    default: z.array(z.unknown()).optional(),
    items: ItemSpecSchema,
    minItems: z.number().int().min(0).optional(),
    maxItems: z.number().int().min(1).optional().meta({ description: 'Default 1,000' }),
  })
  .strict();

/** One param's declaration in an analytic definition. */
export const ParamSpecSchema = z
  .discriminatedUnion('type', [
    IntegerParam,
    NumberParam,
    StringParam,
    BooleanParam,
    DateParam,
    TimestampParam,
    EnumParam,
    ArrayParam,
  ])
  .meta({
    id: 'ParamSpec',
    description: 'One parameter: its type and bounds (docs/analytics.md has every field and its default)',
  });
