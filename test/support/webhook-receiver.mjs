// A webhook receiver for the end-to-end tests, run as its own process on loopback
// (test/support/webhook-receiver.ts starts it). POST /hook/<name> records the delivery (its
// Standard Webhooks headers and raw body) and answers what the plan of <name> says next:
// POST /control/<name> {"statuses": [500, 500, 500], "hang": 1} queues three 500s and holds one
// request open without answering. GET /log answers every delivery so far.
import { createServer } from 'node:http';

const log = [];
const plans = new Map();

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (c) => chunks.push(c));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const [, kind, name] = (request.url ?? '').split('/');
    if (request.method === 'GET' && kind === 'log') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(log));
      return;
    }
    if (request.method === 'POST' && kind === 'control') {
      plans.set(name, JSON.parse(body));
      response.writeHead(204).end();
      return;
    }
    if (request.method === 'POST' && kind === 'hook') {
      log.push({
        name,
        at: Date.now(),
        id: request.headers['webhook-id'],
        timestamp: request.headers['webhook-timestamp'],
        signature: request.headers['webhook-signature'],
        body,
      });
      const plan = plans.get(name) ?? {};
      if (plan.hang > 0) {
        plan.hang -= 1;
        return; // never answered
      }
      const status = plan.statuses?.length > 0 ? plan.statuses.shift() : 200;
      if (plan.redirect) {
        response.writeHead(302, { location: plan.redirect }).end();
        return;
      }
      response.writeHead(status, { 'content-type': 'text/plain' });
      // A large answer: the gateway reads 64 KiB of it at most.
      response.end(plan.bigBody ? 'x'.repeat(1024 * 1024) : 'ok');
      return;
    }
    response.writeHead(404).end();
  });
});
// Longer than the test's idle gaps: a reused keep-alive socket is never closed under a request.
server.keepAliveTimeout = 120_000;
server.headersTimeout = 121_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
