// The peer of the gateway's cheap scenario: PostGraphile 4 (npm `postgraphile`, pinned in
// bench/package.json; v5 needs Node 22) serving the bench's warehouse schema as GraphQL on
// node:http, with its production settings (no query log, no GraphiQL, no mutations, no watch).
// It does what the lookup needs and nothing a gateway adds: no key, rate limit, quota or metering.
// Run: node --import tsx bench/src/postgraphile-peer.ts <postgres-url> <schema>   (PORT, HOST from the env)
import { createServer } from 'node:http';
import postgraphilePackage from 'postgraphile';

function main(): void {
  const [url, schema] = process.argv.slice(2);
  if (url === undefined || schema === undefined)
    throw new Error('usage: postgraphile-peer.ts <postgres-url> <schema>');
  const middleware = postgraphilePackage.postgraphile(url, schema, {
    graphqlRoute: '/graphql',
    graphiql: false,
    disableQueryLog: true,
    disableDefaultMutations: true,
    watchPg: false,
    retryOnInitFail: false,
    setofFunctionsContainNulls: false,
    ignoreRBAC: false,
    dynamicJson: true,
  });
  const server = createServer((request, response) => {
    if (request.url === '/healthz') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('ok');
      return;
    }
    middleware(request, response);
  });
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

main();
