// Scenario a's server, run as its own process: bare `node:http` answering every request with
// the same bytes (a real cached gateway answer, read from a file), after reading the request
// body as any server must. The ceiling the gateway's cache hit is measured against.
// Run: node --import tsx bench/src/bare-http-server.ts <body-file>   (PORT, HOST from the env)
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

function main(): void {
  const file = process.argv[2];
  if (file === undefined) throw new Error('usage: bare-http-server.ts <body-file>');
  const body = readFileSync(file);
  const headers = { 'content-type': 'application/json', 'content-length': String(body.length) };
  const server = createServer((request, response) => {
    request.on('end', () => {
      response.writeHead(200, headers);
      response.end(body);
    });
    request.resume();
  });
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

main();
