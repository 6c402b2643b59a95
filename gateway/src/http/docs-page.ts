// The /docs page, rendered by the gateway from its own OpenAPI document: plain HTML the browser
// paints at once (no renderer to download and run first; Swagger UI took seconds to process the
// whole document and stays at /docs/swagger as the full explorer). Groups come in the document's
// tag order, the caller's first (Query); the Authorize box asks for the API key first; each
// operation folds open with its parameters, its body's example and answers, and "Try it" sends the
// example with the key (docs.js, a file: the page's CSP allows no inline script). Every text from
// the document is escaped: only `code` spans become elements. Groups below the first are laid out
// only when scrolled to (content-visibility), so the first paint costs one group.

/** The parts of an OpenAPI 3.1 document the page reads. */
interface Schema {
  readonly type?: string | readonly string[];
  readonly example?: unknown;
  readonly examples?: readonly unknown[];
  readonly $ref?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly default?: unknown;
}
interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly required?: boolean;
  readonly description?: string;
  readonly example?: unknown;
  readonly schema?: Schema;
}
interface MediaType {
  readonly schema?: Schema;
  readonly example?: unknown;
}
interface Operation {
  readonly operationId?: string;
  readonly summary?: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  readonly security?: readonly Readonly<Record<string, readonly string[]>>[];
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: { readonly content?: Readonly<Record<string, MediaType>> };
  readonly responses?: Readonly<Record<string, { readonly description?: string }>>;
}
export interface DocsDocument {
  readonly info: { readonly title: string; readonly version: string; readonly description?: string };
  readonly tags?: readonly { readonly name: string; readonly description?: string }[];
  readonly paths: Readonly<Record<string, Readonly<Record<string, Operation>>>>;
  readonly components?: {
    readonly schemas?: Readonly<Record<string, Schema>>;
    readonly securitySchemes?: Readonly<
      Record<string, { readonly type: string; readonly description?: string }>
    >;
  };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

const esc = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Escaped text with `code` spans as elements (the document's only markup worth keeping). */
const prose = (text: string | undefined): string =>
  text === undefined ? '' : esc(text).replace(/`([^`]+)`/g, '<code>$1</code>');

const slug = (text: string): string => text.toLowerCase().replace(/[^a-z0-9]+/g, '-');

function resolve(doc: DocsDocument, schema: Schema | undefined): Schema | undefined {
  if (schema?.$ref === undefined) return schema;
  const name = schema.$ref.split('/').pop() ?? '';
  return doc.components?.schemas?.[name];
}

/** An example of a schema: its own, else one built from its required properties' examples. */
function exampleOf(doc: DocsDocument, given: Schema | undefined, depth = 0): unknown {
  const schema = resolve(doc, given);
  if (schema === undefined || depth > 4) return undefined;
  if (schema.example !== undefined) return schema.example;
  if (schema.examples?.[0] !== undefined) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.enum?.[0] !== undefined) return schema.enum[0];
  if (schema.properties === undefined) return undefined;
  const built: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    const value = exampleOf(doc, schema.properties[name], depth + 1);
    if (value !== undefined) built[name] = value;
  }
  return built;
}

function parameterRows(doc: DocsDocument, parameters: readonly Parameter[]): string {
  if (parameters.length === 0) return '';
  const rows = parameters
    .map((p) => {
      const example = p.example ?? exampleOf(doc, p.schema);
      const type = resolve(doc, p.schema)?.type;
      const input =
        p.in === 'path' || p.in === 'query'
          ? `<input data-in="${p.in}" data-name="${esc(p.name)}" aria-label="${esc(`${p.name} (${p.in})`)}" value="${example === undefined ? '' : esc(String(example))}">`
          : '';
      return `<tr><td><code>${esc(p.name)}</code>${p.required ? ' <span class="req">required</span>' : ''}</td><td>${esc(p.in)}</td><td>${esc(Array.isArray(type) ? type.join(' | ') : String(type ?? ''))}</td><td>${prose(p.description)}</td><td>${input}</td></tr>`;
    })
    .join('');
  return `<div class="scroll" tabindex="0" role="region" aria-label="Parameters"><table><caption>Parameters</caption><thead><tr><th scope="col">Name</th><th scope="col">In</th><th scope="col">Type</th><th scope="col">Description</th><th scope="col">Value</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function operationHtml(doc: DocsDocument, method: string, path: string, op: Operation): string {
  const id = op.operationId ?? slug(`${method} ${path}`);
  const json = op.requestBody?.content?.['application/json'];
  const example = json === undefined ? undefined : (json.example ?? exampleOf(doc, json.schema) ?? {});
  const auth = (op.security ?? []).flatMap((s) => Object.keys(s));
  const responses = Object.entries(op.responses ?? {})
    .map(([status, r]) => `<li><code>${esc(status)}</code> ${prose(r.description)}</li>`)
    .join('');
  return `<details class="op" id="${esc(id)}" data-op="${method.toUpperCase()} ${esc(path)}" data-method="${method.toUpperCase()}" data-path="${esc(path)}">
<summary><span class="method ${method}">${method.toUpperCase()}</span> <code class="path">${esc(path)}</code> <span class="summary">${prose(op.summary)}</span></summary>
<div class="body">
${op.description === undefined ? '' : `<p>${prose(op.description)}</p>`}
<p class="auth">${auth.length === 0 ? 'No credential needed.' : `Credential: ${auth.map((a) => `<code>${esc(a)}</code>`).join(' or ')}.`}</p>
${parameterRows(doc, op.parameters ?? [])}
${example === undefined ? '' : `<label class="example">Request body (JSON)<textarea spellcheck="false" rows="${Math.min(12, JSON.stringify(example, null, 2).split('\n').length + 1)}">${esc(JSON.stringify(example, null, 2))}</textarea></label>`}
<h4>Answers</h4><ul class="responses">${responses}</ul>
<p><button type="button" class="try">Try it</button></p>
<output class="result" aria-live="polite"></output>
</div>
</details>`;
}

/** The whole page (`assetVersion` makes the script and stylesheet addresses immutable). */
export function renderDocsPage(doc: DocsDocument, assetVersion: string): string {
  const byTag = new Map<string, string[]>();
  const order = (doc.tags ?? []).map((t) => t.name);
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op === undefined) continue;
      const tag = op.tags?.[0] ?? 'Other';
      if (!order.includes(tag)) order.push(tag);
      byTag.set(tag, [...(byTag.get(tag) ?? []), operationHtml(doc, method, path, op)]);
    }
  }
  const described = new Map((doc.tags ?? []).map((t) => [t.name, t.description]));
  const groups = order.filter((tag) => byTag.has(tag));
  const schemes = Object.entries(doc.components?.securitySchemes ?? {})
    .map(([name, s]) => `<li><code>${esc(name)}</code>: ${prose(s.description)}</li>`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info.title)} reference</title>
<style>${DOCS_CSS}</style>
</head>
<body>
<header><p class="brand">${esc(doc.info.title)} <span>${esc(doc.info.version)}</span></p>
<nav aria-label="Reference"><a href="/">Console</a> <a href="/v1/openapi.json">OpenAPI document</a> <a href="/docs/swagger">Full explorer (Swagger UI)</a></nav></header>
<main>
<h1>${esc(doc.info.title)} reference</h1>
<p>${prose(doc.info.description)}</p>
<section class="authorize" aria-labelledby="authorize-title">
<h2 id="authorize-title">Authorize</h2>
<label for="api-key">API key (<code>Authorization: Bearer qry_live_…</code>), or an OAuth access token</label>
<input id="api-key" type="password" autocomplete="off" spellcheck="false" placeholder="qry_live_…">
<p class="hint">Kept in this tab only (sessionStorage); sent with "Try it" to this gateway and nowhere else. Every scheme:</p>
<ul class="schemes">${schemes}</ul>
</section>
<nav aria-label="Groups" class="groups">${groups.map((tag) => `<a href="#group-${slug(tag)}">${esc(tag)}</a>`).join(' ')}</nav>
${groups
  .map(
    (
      tag,
    ) => `<section class="group" id="group-${slug(tag)}" data-tag="${esc(tag)}" aria-labelledby="group-${slug(tag)}-title">
<h2 id="group-${slug(tag)}-title">${esc(tag)}</h2>
${described.get(tag) === undefined ? '' : `<p>${prose(described.get(tag))}</p>`}
${(byTag.get(tag) ?? []).join('\n')}
</section>`,
  )
  .join('\n')}
</main>
<script src="/docs/assets/docs.js?v=${assetVersion}" defer></script>
</body>
</html>
`;
}

/** "Try it": sends an operation's example with the key typed in the Authorize box. */
export const DOCS_JS = `(function () {
  var key = document.getElementById('api-key');
  key.value = sessionStorage.getItem('quarry.docs.key') || '';
  key.addEventListener('input', function () { sessionStorage.setItem('quarry.docs.key', key.value.trim()); });
  // The Query group opens by itself: it is what a caller comes for.
  var first = document.querySelector('.group[data-tag="Query"] details.op');
  if (first && !window.location.hash) first.open = true;
  document.addEventListener('click', function (event) {
    var button = event.target.closest && event.target.closest('button.try');
    if (!button) return;
    var op = button.closest('details.op');
    var out = op.querySelector('output.result');
    var path = op.dataset.path;
    var query = new URLSearchParams();
    op.querySelectorAll('input[data-in]').forEach(function (input) {
      if (input.dataset.in === 'path') path = path.replace('{' + input.dataset.name + '}', encodeURIComponent(input.value));
      else if (input.value !== '') query.append(input.dataset.name, input.value);
    });
    var headers = {};
    if (key.value.trim() !== '') headers.authorization = 'Bearer ' + key.value.trim();
    var body = op.querySelector('textarea');
    var init = { method: op.dataset.method, headers: headers };
    if (body) { headers['content-type'] = 'application/json'; init.body = body.value; }
    var url = path + (query.toString() ? '?' + query.toString() : '');
    out.textContent = 'Sending ' + op.dataset.method + ' ' + url + '…';
    button.disabled = true;
    fetch(url, init).then(function (response) {
      return response.text().then(function (text) {
        var shown = text;
        try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch (e) {}
        out.innerHTML = '';
        var status = document.createElement('p');
        status.className = 'status';
        status.textContent = response.status + ' ' + response.statusText;
        var pre = document.createElement('pre');
        pre.tabIndex = 0;
        pre.textContent = shown;
        out.appendChild(status);
        out.appendChild(pre);
      });
    }).catch(function (error) {
      out.textContent = 'The request failed: ' + error.message;
    }).finally(function () { button.disabled = false; });
  });
})();
`;

/** The page's styles, inlined (the docs policy allows inline styles; one request fewer before the first paint). */
export const DOCS_CSS = `:root { color-scheme: light; --fg: #1b1f24; --muted: #4a5562; --line: #d5dae0; --accent: #0b5cad; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: #fff; }
header { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; align-items: baseline; padding: 0.6rem 1rem; border-bottom: 1px solid var(--line); }
header .brand { margin: 0; font-weight: 700; }
header .brand span { font-weight: 400; color: var(--muted); }
header nav a { margin-right: 1rem; }
a { color: var(--accent); }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.6rem; margin: 0.5rem 0; }
code { font-family: ui-monospace, monospace; font-size: 0.9em; overflow-wrap: anywhere; }
.authorize { border: 1px solid var(--line); border-radius: 8px; padding: 0.8rem 1rem; margin: 1rem 0; background: #f6f8fa; }
.authorize h2 { margin: 0 0 0.4rem; font-size: 1.15rem; }
.authorize input { display: block; width: 100%; max-width: 32rem; padding: 0.4rem; font: inherit; margin: 0.3rem 0; }
.hint { color: var(--muted); font-size: 0.9rem; }
.groups a { margin-right: 0.8rem; white-space: nowrap; }
.group h2 { margin: 1.6rem 0 0.2rem; font-size: 1.3rem; }
.group + .group { content-visibility: auto; contain-intrinsic-size: auto 40rem; }
details.op { border: 1px solid var(--line); border-radius: 6px; margin: 0.5rem 0; }
details.op > summary { cursor: pointer; padding: 0.5rem 0.7rem; list-style-position: inside; overflow-wrap: anywhere; }
details.op[open] > summary { border-bottom: 1px solid var(--line); }
.method { display: inline-block; min-width: 4.2rem; text-align: center; font-weight: 700; font-size: 0.8rem; padding: 0.1rem 0.4rem; border-radius: 4px; color: #fff; }
.method.get { background: #0b5cad; } .method.post { background: #17692e; } .method.put { background: #8a4b00; }
.method.patch { background: #5b3f9e; } .method.delete { background: #a4161a; }
.summary { color: var(--fg); }
.op .body { padding: 0.4rem 0.9rem 0.8rem; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.9rem; }
caption { text-align: left; font-weight: 600; }
th, td { border-bottom: 1px solid var(--line); padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
.req { color: #a4161a; font-size: 0.8rem; }
label.example { display: block; font-weight: 600; }
textarea { display: block; width: 100%; font: 0.9rem ui-monospace, monospace; margin-top: 0.3rem; }
td input { width: 10rem; font: inherit; }
button.try { font: inherit; padding: 0.35rem 1rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
output pre { background: #f6f8fa; border: 1px solid var(--line); padding: 0.6rem; overflow: auto; max-height: 24rem; }
.status { font-weight: 700; margin: 0.4rem 0 0; }
:focus-visible { outline: 3px solid #f0b400; outline-offset: 2px; }
`;
