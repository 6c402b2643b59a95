// The example call of a listing in each official client's language (client/ and clients/), from
// the listing's example params. Values are embedded as JSON literals, which every one of these
// languages reads (Go and PHP through a decoded JSON string), so no owner text can break out.

export interface CodeExample {
  readonly language: string;
  readonly code: string;
}

const json = (value: unknown) => JSON.stringify(value);

function pythonLiteral(value: unknown): string {
  // JSON → Python: true/false/null differ; everything else is the same text.
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${json(k)}: ${pythonLiteral(v)}`)
      .join(', ')}}`;
  }
  return json(value);
}

function rubyLiteral(value: unknown): string {
  if (value === null) return 'nil';
  if (Array.isArray(value)) return `[${value.map(rubyLiteral).join(', ')}]`;
  if (typeof value === 'object') {
    return `{ ${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${json(k)} => ${rubyLiteral(v)}`)
      .join(', ')} }`;
  }
  // Ruby double-quoted strings interpolate #{…}: escape the # of a string value.
  return typeof value === 'string' ? json(value).replace(/#/g, '\\#') : json(value);
}

/** A PHP single-quoted string literal. */
const phpString = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
/** A Go raw string literal (backquotes cannot occur in it: such text goes as a quoted string). */
const goString = (text: string) => (text.includes('`') ? json(text) : `\`${text}\``);

export function codeExamples(
  origin: string,
  source: string,
  params: Readonly<Record<string, unknown>>,
  curl: string,
): CodeExample[] {
  return [
    { language: 'curl', code: curl },
    {
      language: 'TypeScript',
      code: [
        "import { createQuarryClient } from '@quarry/client';",
        '',
        `const quarry = createQuarryClient({ baseUrl: ${json(origin)}, apiKey: process.env.QUARRY_API_KEY! });`,
        `const answer = await quarry.query(${json(source)}, ${json(params)});`,
        'console.log(answer.results);',
      ].join('\n'),
    },
    {
      language: 'Python',
      code: [
        'import os',
        'from quarry_client import QuarryClient',
        '',
        `quarry = QuarryClient(${json(origin)}, api_key=os.environ["QUARRY_API_KEY"])`,
        `answer = quarry.query(${json(source)}, ${pythonLiteral(params)})`,
        'print(answer.results)',
      ].join('\n'),
    },
    {
      language: 'Go',
      code: [
        `client, _ := quarry.New(${json(origin)}, quarry.WithAPIKey(os.Getenv("QUARRY_API_KEY")))`,
        'var params quarry.Params',
        `_ = json.Unmarshal([]byte(${goString(json(params))}), &params)`,
        `res, err := client.Query(ctx, ${json(source)}, params)`,
        'if err != nil { log.Fatal(err) }',
        'fmt.Println(res.Results)',
      ].join('\n'),
    },
    {
      language: 'PHP',
      code: [
        `$quarry = new Quarry\\Client(${phpString(origin)}, apiKey: getenv('QUARRY_API_KEY'));`,
        `$answer = $quarry->query(${phpString(source)}, json_decode(${phpString(json(params))}, true));`,
        'print_r($answer->results);',
      ].join('\n'),
    },
    {
      language: 'Ruby',
      code: [
        'require "quarry"',
        '',
        `client = Quarry::Client.new(${rubyLiteral(origin)}, api_key: ENV.fetch("QUARRY_API_KEY"))`,
        `answer = client.query(${rubyLiteral(source)}, ${rubyLiteral(params)})`,
        'p answer.results',
      ].join('\n'),
    },
  ];
}
