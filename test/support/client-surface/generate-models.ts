// Writes the Python, Go, Ruby and PHP clients' models from the served OpenAPI document, so each
// has a class per schema its methods answer with (test/support/client-surface/required-models.ts
// says which) and every field of it. The TypeScript client's types are written by hand.
//
//   npx tsx test/support/client-surface/generate-models.ts <openapi.json | http://gateway>
//
// The classes written by hand in each client (a query's result, API keys, error details) are
// left out here and carry their schema names themselves.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../gateway-process.js';
import { type OpenApiDocument, requiredModels } from './required-models.js';

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  additionalProperties?: Schema | boolean;
  description?: string;
};

/** Written by hand in every client (with their schema names on them). */
const HAND_WRITTEN = new Set([
  'QueryResponse',
  'QueryResponse.meta',
  'QueryResponse.columns[]',
  'ApiKey',
  'IssuedApiKey',
  'Error.error.details[]',
]);

/** Class names of inline objects, where the path would make a clumsy one. */
const NAMES: Record<string, string> = {
  'ConnectorTypes.connectors[]': 'ConnectorType',
  'Billing.plans[]': 'BillingPlan',
  'PaygInvoice.lines[]': 'PaygInvoiceLine',
  'Usage.totals': 'UsageTotals',
  'Usage.by_analytic[]': 'UsageByAnalytic',
  'Usage.by_day[]': 'UsageByDay',
  'OwnerStatement.analytics[]': 'StatementAnalytic',
  'OwnerStatement.by_day[]': 'StatementDay',
  'OwnerStatement.totals': 'StatementTotals',
  'OwnerStatement.payout': 'StatementPayout',
  'Budget.budget': 'BudgetSettings',
  'McpSettings.mcp': 'McpDefaults',
  'Listing.owner': 'ListingOwner',
  'ListingDetail.example_request': 'ExampleRequest',
  'ListingDetail.example_request.body': 'ExampleRequestBody',
  'AnalyticDefinition.cache': 'CacheSettings',
  'AnalyticDefinition.limits': 'Limits',
};

const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((p) => p[0]?.toUpperCase() + p.slice(1))
    .join('');
const classOf = (model: string) => NAMES[model] ?? pascal(model);

/** A field's type, language-neutral. */
type FieldType =
  | { kind: 'string' | 'integer' | 'number' | 'boolean' | 'any' | 'map' }
  | { kind: 'model'; model: string }
  | { kind: 'list'; of: FieldType };

interface Field {
  readonly name: string;
  readonly type: FieldType;
  readonly optional: boolean;
  /** The gateway may send null. */
  readonly nullable: boolean;
  readonly description?: string;
}

interface Model {
  readonly schema: string;
  readonly className: string;
  readonly fields: readonly Field[];
  readonly description?: string;
}

async function loadDocument(source: string): Promise<OpenApiDocument> {
  if (/^https?:/.test(source))
    return (await (await fetch(`${source.replace(/\/$/, '')}/v1/openapi.json`)).json()) as OpenApiDocument;
  return JSON.parse(readFileSync(source, 'utf8')) as OpenApiDocument;
}

function buildModels(doc: OpenApiDocument): Model[] {
  const schemas = doc.components.schemas as Record<string, Schema>;
  const surface = JSON.parse(readFileSync(join(REPO_ROOT, 'clients/api-surface.json'), 'utf8')) as {
    methods: Record<string, string>;
  };
  const required = requiredModels(doc, new Set(Object.keys(surface.methods)));
  const resolve = (s: Schema): Schema => (s.$ref ? (schemas[s.$ref.split('/').pop() as string] ?? {}) : s);
  const merged = (s: Schema): { properties: Record<string, Schema>; required: string[] } => {
    let properties = { ...(s.properties ?? {}) };
    let req = [...(s.required ?? [])];
    for (const m of s.allOf ?? []) {
      const inner = merged(resolve(m));
      properties = { ...properties, ...inner.properties };
      req = [...req, ...inner.required];
    }
    return { properties, required: req };
  };
  const isNull = (s: Schema) => Array.isArray(s.type) && s.type.includes('null');
  const typeOf = (s: Schema, path: string): { type: FieldType; nullable: boolean } => {
    if (s.$ref) {
      const name = s.$ref.split('/').pop() as string;
      // A schema may say itself that it can be null (`type: ['object', 'null']`).
      return {
        type: required.has(name) ? { kind: 'model', model: name } : { kind: 'any' },
        nullable: isNull(resolve(s)),
      };
    }
    if (s.allOf?.length === 1 && s.allOf[0]?.$ref && !s.properties) return typeOf(s.allOf[0], path);
    // `allOf: [{$ref}, {type: ['object', 'null']}]` is how a nullable reference is written; a
    // nullable schema merged with properties of its own (Budget's budget) is not null.
    const nullable = isNull(s) || (s.allOf ?? []).some((m) => !m.$ref && !m.properties && isNull(m));
    if (required.has(path)) return { type: { kind: 'model', model: path }, nullable };
    const t = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type;
    if (t === 'array' && s.items) {
      const item = typeOf(s.items, `${path}[]`);
      return { type: { kind: 'list', of: item.type }, nullable };
    }
    if (t === 'string' || t === 'integer' || t === 'number' || t === 'boolean')
      return { type: { kind: t }, nullable };
    if (t === 'object') return { type: { kind: 'map' }, nullable };
    const members = [...(s.anyOf ?? []), ...(s.oneOf ?? [])];
    const nonNull = members.filter((m) => m.type !== 'null');
    if (nonNull.length === 1 && nonNull[0]) return { ...typeOf(nonNull[0], path), nullable: true };
    // A oneOf of shapes, or anything: nullable only when the schema says so.
    return { type: { kind: 'any' }, nullable: nullable || members.some((m) => m.type === 'null') };
  };
  const models: Model[] = [];
  for (const path of required.keys()) {
    if (HAND_WRITTEN.has(path)) continue;
    // The schema at the path: a component, or the inline object at a property path.
    let schema: Schema | undefined = schemas[path];
    if (!schema) {
      const [root, ...rest] = path.split('.');
      schema = schemas[root as string];
      for (const step of rest) {
        const name = step.replace(/\[\]$/, '');
        schema = schema ? merged(schema).properties[name] : undefined;
        if (schema && step.endsWith('[]')) schema = schema.items;
        if (schema?.anyOf) schema = schema.anyOf.find((m) => m.type !== 'null') ?? schema;
      }
    }
    if (!schema) throw new Error(`no schema at ${path}`);
    const { properties, required: req } = merged(schema);
    const fields = Object.entries(properties).map(([name, property]) => {
      const { type, nullable } = typeOf(property, `${path}.${name}`);
      return {
        name,
        type,
        optional: nullable || !req.includes(name),
        nullable,
        ...(property.description ? { description: property.description } : {}),
      };
    });
    models.push({
      schema: path,
      className: classOf(path),
      fields,
      ...(schema.description ? { description: schema.description } : {}),
    });
  }
  return models;
}

const oneLine = (s: string | undefined) => (s ?? '').replace(/\s+/g, ' ').trim();
const describe = (m: Model) => {
  if (oneLine(m.description)) return oneLine(m.description);
  const [root, ...path] = m.schema.split('.');
  return path.length > 0 ? `\`${path.join('.')}\` of ${root}.` : `What the API answers as ${root}.`;
};

// ---------------------------------------------------------------------------------------- Python
function python(models: readonly Model[]): string {
  const names = new Map(models.map((m) => [m.schema, m.className]));
  const hint = (t: FieldType): string => {
    switch (t.kind) {
      case 'string':
        return 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'map':
        return 'Dict[str, Any]';
      case 'any':
        return 'Any';
      case 'model':
        return `"${names.get(t.model) ?? 'Any'}"`;
      case 'list':
        return `List[${hint(t.of)}]`;
    }
  };
  const build = (t: FieldType, v: string): string => {
    if (t.kind === 'model') {
      const cls = names.get(t.model);
      return cls ? `${cls}.from_json(${v})` : v;
    }
    if (t.kind === 'list' && (t.of.kind === 'model' || t.of.kind === 'list'))
      return `[${build(t.of, 'item')} for item in ${v}]`;
    if (t.kind === 'list') return `list(${v})`;
    return v;
  };
  const out = [
    '"""The models of the API\'s answers, one class per OpenAPI schema (generated).',
    '',
    'Written by test/support/client-surface/generate-models.ts from the served OpenAPI document;',
    'run it again when the API changes. Field names stay as on the wire; every class keeps the',
    'answer as sent in ``raw`` (fields this client does not know yet included).',
    '"""',
    'from __future__ import annotations',
    '',
    'from dataclasses import dataclass, field',
    'from typing import Any, ClassVar, Dict, List, Mapping, Optional',
    '',
    `__all__ = [${models.map((m) => `"${m.className}"`).join(', ')}]`,
    '',
  ];
  for (const m of models) {
    const ordered = [...m.fields.filter((f) => !f.optional), ...m.fields.filter((f) => f.optional)];
    out.push(
      '',
      '@dataclass(frozen=True)',
      `class ${m.className}:`,
      `    """${describe(m).replace(/"""/g, "'''").replace(/\\/g, '')}"""`,
      '',
    );
    out.push(`    __quarry_schema__: ClassVar[str] = "${m.schema}"`, '');
    for (const f of ordered) {
      if (f.description) out.push(`    #: ${oneLine(f.description)}`);
      out.push(
        f.optional ? `    ${f.name}: Optional[${hint(f.type)}] = None` : `    ${f.name}: ${hint(f.type)}`,
      );
    }
    out.push('    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)', '');
    out.push(
      '    @classmethod',
      `    def from_json(cls, body: Mapping[str, Any]) -> "${m.className}":`,
      '        """Builds one from the gateway\'s decoded JSON."""',
    );
    out.push('        return cls(');
    for (const f of ordered) {
      const v = `body.get("${f.name}")`;
      const built = build(f.type, v);
      out.push(
        built === v
          ? `            ${f.name}=${v},`
          : `            ${f.name}=None if body.get("${f.name}") is None else ${built},`,
      );
    }
    out.push('            raw=dict(body),', '        )', '');
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n\n')
    .trimEnd()}\n`;
}

// -------------------------------------------------------------------------------------------- Go
const GO_INITIALISMS = new Set(['id', 'url', 'usd', 'ms', 'ttl', 'sql', 'api']);
const goField = (name: string) =>
  name
    .split('_')
    .map((p) => (GO_INITIALISMS.has(p) ? p.toUpperCase() : p[0]?.toUpperCase() + p.slice(1)))
    .join('');

function go(models: readonly Model[]): { code: string; schemas: string } {
  const names = new Map(models.map((m) => [m.schema, m.className]));
  const goType = (t: FieldType): string => {
    switch (t.kind) {
      case 'string':
        return 'string';
      case 'integer':
        return 'int64';
      case 'number':
        return 'float64';
      case 'boolean':
        return 'bool';
      case 'map':
        return 'map[string]any';
      case 'any':
        return 'any';
      case 'model':
        return names.get(t.model) ?? 'any';
      case 'list':
        return `[]${goType(t.of)}`;
    }
  };
  const out = [
    '// Code generated by test/support/client-surface/generate-models.ts from the served OpenAPI',
    '// document; DO NOT EDIT. Run it again when the API changes.',
    '',
    'package quarry',
    '',
  ];
  for (const m of models) {
    out.push(`// ${m.className} is the ${m.schema} schema: ${describe(m)}`, `type ${m.className} struct {`);
    for (const f of m.fields) {
      let t = goType(f.type);
      // A nullable scalar or model is a pointer: nil when the gateway sent null or nothing.
      if (
        f.optional &&
        (f.type.kind === 'model' ||
          (['string', 'integer', 'number', 'boolean'].includes(f.type.kind) && f.optional))
      )
        t = `*${t}`;
      if (f.description) out.push(`\t// ${goField(f.name)}: ${oneLine(f.description)}`);
      // Left out when unset, except a field the gateway may send as null: kept, as null.
      out.push(
        `\t${goField(f.name)} ${t} \`json:"${f.name}${f.optional && !f.nullable ? ',omitempty' : ''}"\``,
      );
    }
    out.push('}', '');
  }
  const schemas = [
    '// Code generated by test/support/client-surface/generate-models.ts; DO NOT EDIT.',
    '',
    'package quarry',
    '',
    '// generatedModels maps each OpenAPI schema to the struct that stands for it.',
    'var generatedModels = map[string]any{',
    ...models.map((m) => `\t"${m.schema}": ${m.className}{},`),
    '}',
    '',
  ];
  return { code: out.join('\n'), schemas: schemas.join('\n') };
}

// ------------------------------------------------------------------------------------------ Ruby
function ruby(models: readonly Model[]): string {
  const names = new Map(models.map((m) => [m.schema, m.className]));
  const build = (t: FieldType, v: string): string => {
    if (t.kind === 'model') {
      const cls = names.get(t.model);
      return cls ? `${cls}.from_json(${v})` : v;
    }
    if (t.kind === 'list' && (t.of.kind === 'model' || t.of.kind === 'list'))
      return `${v}.map { |item| ${build(t.of, 'item')} }`;
    return v;
  };
  const out = [
    '# frozen_string_literal: true',
    '',
    '# Code generated by test/support/client-surface/generate-models.ts from the served OpenAPI',
    '# document; do not edit. Run it again when the API changes.',
    '',
    'module Quarry',
    "  # The models of the API's answers, one class per OpenAPI schema. Field names stay as on the",
    '  # wire; #raw keeps the answer as sent, #to_h gives plain Hashes back.',
    '  module Models',
    '    # What every model shares: its fields, read from a decoded JSON Hash.',
    '    class Model',
    '      # The answer as sent (fields this client does not know yet included).',
    '      attr_reader :raw',
    '',
    '      # Builds one from keyword arguments named as the fields.',
    '      def initialize(raw: {}, **fields)',
    '        self.class::FIELDS.each { |name| instance_variable_set("@#{name}", fields[name.to_sym]) }',
    '        @raw = raw',
    '      end',
    '',
    '      # The fields as a Hash with String keys, nested models as Hashes too.',
    '      def to_h',
    '        self.class::FIELDS.to_h { |name| [name, Model.plain(public_send(name))] }',
    '      end',
    '',
    '      def ==(other) = other.class == self.class && other.to_h == to_h',
    '',
    '      # A value as plain JSON-like data.',
    '      def self.plain(value)',
    '        case value',
    '        when Model then value.to_h',
    '        when Array then value.map { |v| plain(v) }',
    '        else value',
    '        end',
    '      end',
    '    end',
    '',
  ];
  for (const m of models) {
    out.push(`    # ${m.schema}: ${describe(m)}`, `    class ${m.className} < Model`);
    out.push(`      SCHEMA = "${m.schema}"`);
    out.push(`      FIELDS = %w[${m.fields.map((f) => f.name).join(' ')}].freeze`);
    out.push(`      attr_reader ${m.fields.map((f) => `:${f.name}`).join(', ')}`, '');
    out.push("      # Builds one from the gateway's decoded JSON (a Hash with String keys).");
    out.push('      def self.from_json(body)');
    out.push('        new(');
    for (const f of m.fields) {
      const v = `body["${f.name}"]`;
      const built = build(f.type, v);
      out.push(
        built === v ? `          ${f.name}: ${v},` : `          ${f.name}: ${v}.nil? ? nil : ${built},`,
      );
    }
    out.push('          raw: body', '        )', '      end', '    end', '');
  }
  out.push('  end', 'end', '');
  return out.join('\n').replace(/\n\n(\s+end\n)/g, '\n$1');
}

// ------------------------------------------------------------------------------------------- PHP
function php(models: readonly Model[]): Record<string, string> {
  const names = new Map(models.map((m) => [m.schema, m.className]));
  const phpType = (t: FieldType): string =>
    t.kind === 'string'
      ? 'string'
      : t.kind === 'integer'
        ? 'int'
        : t.kind === 'number'
          ? 'int|float'
          : t.kind === 'boolean'
            ? 'bool'
            : t.kind === 'model'
              ? (names.get(t.model) ?? 'mixed')
              : t.kind === 'any'
                ? 'mixed'
                : 'array';
  const docType = (t: FieldType): string =>
    t.kind === 'list' ? `list<${docType(t.of)}>` : t.kind === 'map' ? 'array<string, mixed>' : phpType(t);
  const build = (t: FieldType, v: string): string => {
    if (t.kind === 'model') {
      const cls = names.get(t.model);
      return cls ? `${cls}::fromArray(${v})` : v;
    }
    if (t.kind === 'list' && (t.of.kind === 'model' || t.of.kind === 'list'))
      return `array_map(static fn (array $item) => ${build(t.of, '$item')}, ${v})`;
    return v;
  };
  const files: Record<string, string> = {};
  for (const m of models) {
    const ordered = [...m.fields.filter((f) => !f.optional), ...m.fields.filter((f) => f.optional)];
    const lines = [
      '<?php',
      '',
      'declare(strict_types=1);',
      '',
      '// Generated by test/support/client-surface/generate-models.ts from the served OpenAPI document;',
      '// do not edit. Run it again when the API changes.',
      '',
      'namespace Quarry\\Model;',
      '',
      `/** ${m.schema}: ${describe(m).replace(/\*\//g, '* /')} */`,
      `final class ${m.className} implements \\JsonSerializable`,
      '{',
      `    public const SCHEMA = '${m.schema}';`,
      '',
    ];
    const docs = ordered.filter((f) => f.type.kind === 'list' || f.type.kind === 'map');
    if (docs.length > 0) {
      lines.push('    /**');
      for (const f of docs) lines.push(`     * @param ${f.optional ? '?' : ''}${docType(f.type)} $${f.name}`);
      lines.push('     * @param array<string, mixed> $raw', '     */');
    } else lines.push('    /** @param array<string, mixed> $raw */');
    lines.push('    public function __construct(');
    for (const f of ordered) {
      const t = phpType(f.type);
      const nullable = t === 'mixed' ? t : f.optional ? (t.includes('|') ? `${t}|null` : `?${t}`) : t;
      lines.push(`        public readonly ${nullable} $${f.name}${f.optional ? ' = null' : ''},`);
    }
    lines.push('        public readonly array $raw = [],', '    ) {', '    }', '');
    lines.push(
      '    /**',
      "     * Builds one from the gateway's decoded JSON.",
      '     *',
      '     * @param array<string, mixed> $body',
      '     */',
    );
    lines.push(
      '    public static function fromArray(array $body): self',
      '    {',
      '        return new self(',
    );
    for (const f of ordered) {
      const v = `$body['${f.name}']`;
      const built = build(f.type, v);
      if (f.optional) lines.push(`            ${f.name}: isset(${v}) ? ${built} : null,`);
      else
        lines.push(
          `            ${f.name}: ${built.replace(v, `${v} ?? ${f.type.kind === 'list' || f.type.kind === 'map' ? '[]' : f.type.kind === 'string' ? "''" : f.type.kind === 'boolean' ? 'false' : f.type.kind === 'model' ? '[]' : f.type.kind === 'any' ? 'null' : '0'}`)},`,
        );
    }
    lines.push('            raw: $body,', '        );', '    }', '');
    lines.push(
      '    /** @return array<string, mixed> The fields as sent. */',
      '    public function jsonSerialize(): array',
      '    {',
    );
    lines.push(
      `        return [${m.fields.map((f) => `'${f.name}' => $this->${f.name}`).join(', ')}];`,
      '    }',
      '}',
      '',
    );
    files[m.className] = lines.join('\n');
  }
  return files;
}

/** gofmt's layout of Go source (read from stdin). */
const gofmt = (code: string) => execFileSync('gofmt', { input: code, encoding: 'utf8' });

/**
 * Every generated file of the four clients for the document, by its path under `clients/`.
 * The Go files are laid out by gofmt, so Go must be installed.
 */
export function generatedFiles(doc: OpenApiDocument): Record<string, string> {
  const models = buildModels(doc);
  const g = go(models);
  const files: Record<string, string> = {
    'python/src/quarry_client/api_models.py': python(models),
    'go/models.go': gofmt(g.code),
    'go/models_schemas_test.go': gofmt(g.schemas),
    'ruby/lib/quarry/api_models.rb': ruby(models),
  };
  for (const [name, code] of Object.entries(php(models))) files[`php/src/Model/${name}.php`] = code;
  return files;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const source = process.argv[2];
  if (!source) {
    console.error('usage: generate-models.ts <openapi.json | http://gateway>');
    process.exit(2);
  }
  const files = generatedFiles(await loadDocument(source));
  for (const [path, code] of Object.entries(files)) writeFileSync(join(REPO_ROOT, 'clients', path), code);
  console.log(`wrote ${Object.keys(files).length} files for python, go, ruby and php`);
}
