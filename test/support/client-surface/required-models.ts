// Which models a client must have, read from the served OpenAPI document: every schema of
// `components.schemas` reachable (through $ref in properties, items, allOf, oneOf, anyOf and
// additionalProperties) from a 2xx answer of an operation the clients wrap, that has properties
// (an allOf's members' properties merged), with all its property names; plus the error
// envelope's detail (`Error.error.details[]`), which every client's error exposes.
// An object written inline in a schema (not a $ref) is a model of its own, named by its path:
// `Usage.totals`, `Usage.by_day[]` (the items of an array), `Error.error.details[]`.

type Schema = {
  readonly $ref?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly items?: Schema;
  readonly allOf?: readonly Schema[];
  readonly oneOf?: readonly Schema[];
  readonly anyOf?: readonly Schema[];
  readonly additionalProperties?: Schema | boolean;
};

export interface OpenApiDocument {
  readonly paths: Readonly<
    Record<
      string,
      Readonly<
        Record<
          string,
          {
            readonly operationId?: string;
            readonly responses?: Readonly<
              Record<string, { readonly content?: Readonly<Record<string, { readonly schema?: Schema }>> }>
            >;
          }
        >
      >
    >
  >;
  readonly components: { readonly schemas: Readonly<Record<string, Schema>> };
}

/** Every operationId of the document. */
export function operationIds(doc: OpenApiDocument): string[] {
  return Object.values(doc.paths).flatMap((item) =>
    Object.values(item)
      .map((op) => op.operationId)
      .filter((id): id is string => typeof id === 'string'),
  );
}

const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);

/** The model names (schemas and inline objects by path) the clients need, each with its fields. */
export function requiredModels(
  doc: OpenApiDocument,
  wrappedOperations: ReadonlySet<string>,
): Map<string, string[]> {
  const schemas = doc.components.schemas;
  const required = new Map<string, string[]>();
  const resolve = (schema: Schema): Schema => (schema.$ref ? (schemas[refName(schema.$ref)] ?? {}) : schema);

  /** The properties of a schema with its allOf members' merged (a $ref member resolved). */
  const propertiesOf = (schema: Schema): Record<string, Schema> | undefined => {
    let merged: Record<string, Schema> | undefined = schema.properties ? { ...schema.properties } : undefined;
    for (const member of schema.allOf ?? []) {
      const inner = propertiesOf(resolve(member));
      if (inner) merged = { ...(merged ?? {}), ...inner };
    }
    return merged;
  };

  /** Models met in a schema used at `path` (a model name or an inline path). */
  const visit = (schema: Schema | boolean | undefined, path: string): void => {
    if (schema === undefined || typeof schema === 'boolean') return;
    if (schema.$ref) {
      const name = refName(schema.$ref);
      if (required.has(name)) return;
      const target = schemas[name] ?? {};
      const properties = propertiesOf(target);
      // Marked before walking: a schema that refers to itself is walked once.
      if (properties) required.set(name, Object.keys(properties));
      else required.set(name, []);
      walkShape(target, name);
      return;
    }
    const properties = propertiesOf(schema);
    if (properties && !required.has(path)) required.set(path, Object.keys(properties));
    walkShape(schema, path);
  };

  /** The parts of a schema at `path`: its properties, items, members and map values. */
  const walkShape = (schema: Schema, path: string): void => {
    for (const member of schema.allOf ?? []) {
      if (member.$ref) visit(member, path);
      else walkShape(member, path);
    }
    // A oneOf/anyOf written inline lists variants (an insight's shapes), no model: only the
    // schemas it names are followed.
    for (const member of [...(schema.oneOf ?? []), ...(schema.anyOf ?? [])]) {
      if (member.$ref) visit(member, path);
    }
    for (const [name, property] of Object.entries(schema.properties ?? {}))
      visit(property, `${path}.${name}`);
    if (schema.items) visit(schema.items, `${path}[]`);
    if (typeof schema.additionalProperties === 'object') visit(schema.additionalProperties, `${path}{}`);
  };

  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      if (!op.operationId || !wrappedOperations.has(op.operationId)) continue;
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (!status.startsWith('2')) continue;
        for (const content of Object.values(response.content ?? {})) {
          // The answer's own wrapper (`{keys: [...]}`) is no model: the methods unwrap it.
          const schema = content.schema;
          if (!schema) continue;
          if (schema.$ref) visit(schema, '');
          else walkShape(schema, '');
        }
      }
    }
  }
  // The error envelope: its details with their values (e.g. QUOTA_EXCEEDED's credits_needed).
  visit(schemas.Error?.properties?.error?.properties?.details, 'Error.error.details');
  for (const [name, fields] of [...required]) {
    // Inline objects inside an answer's wrapper (path starting with '.') and schemas without
    // properties (a oneOf of variants) are no models of their own.
    if (name.startsWith('.') || name.startsWith('[') || fields.length === 0) required.delete(name);
  }
  return required;
}
