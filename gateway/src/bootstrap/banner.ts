// The banner `npm start` prints on the embedded defaults, under the log lines.
/** What `npm start` shows a newcomer: where things are, the demo key, and three next steps. */
export function demoBanner(base: string, key: string, keyFile: string): string {
  return [
    '',
    'Quarry is running.',
    `  Console   ${base}/`,
    `  API docs  ${base}/docs`,
    `  Demo key  ${key}  (also in ${keyFile})`,
    '',
    'Next:',
    `  1. Open ${base}/ to browse the marketplace, try an analytic, and see your usage.`,
    `  2. curl -s -X POST ${base}/v1/query -H "Authorization: Bearer ${key}" -H 'Content-Type: application/json' -d '{"source":"sales-by-region","params":{"year":2024}}'`,
    `  3. npx quarry login --url ${base} < ${keyFile} && npx quarry marketplace search`,
    '',
    '',
  ].join('\n');
}
