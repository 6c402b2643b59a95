// `quarry webhooks add|list|test|deliveries`: the account's webhook endpoints (docs/webhooks.md).
import { EXIT } from '../cli-errors.js';
import {
  booleanFlag,
  CONNECTION_HELP,
  CONNECTION_OPTIONS,
  type Command,
  listFlag,
  stringFlag,
} from '../command.js';
import { connect } from '../connection.js';
import { formatTable } from '../table.js';

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export const webhooksAddCommand: Command = {
  name: 'webhooks add',
  summary: 'add a webhook endpoint (its signing secret is shown once)',
  help: `Usage: quarry webhooks add <url> [--event TYPE]... [--description TEXT] [--json]

Adds an endpoint that receives your account's events, signed by the Standard Webhooks scheme,
and prints its signing secret: it is shown this once. The URL must be on a public address.

Options:
  --event TYPE          an event type, e.g. usage.threshold; repeat for several (default: all)
  --description TEXT    a note for yourself
  --json                print the endpoint and its secret as JSON
${CONNECTION_HELP}
  -h, --help            this help
`,
  options: {
    event: { type: 'string', multiple: true },
    description: { type: 'string' },
    json: { type: 'boolean' },
    ...CONNECTION_OPTIONS,
  },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const events = listFlag(flags, 'event');
    const description = stringFlag(flags, 'description');
    const client = await connect(flags, io);
    const issued = await client.webhooks.create({
      url: positionals[0] as string,
      ...(events.length > 0 ? { event_types: events } : {}),
      ...(description === undefined ? {} : { description }),
    });
    if (booleanFlag(flags, 'json')) io.stdout.write(json(issued));
    else {
      const types =
        issued.endpoint.event_types.length === 0 ? 'every event' : issued.endpoint.event_types.join(', ');
      io.stdout.write(
        `Added webhook ${issued.endpoint.id} for ${types} → ${issued.endpoint.url}\nIts signing secret, shown this once:\n${issued.secret}\n`,
      );
    }
    return EXIT.ok;
  },
};

export const webhooksListCommand: Command = {
  name: 'webhooks list',
  summary: "list the account's webhook endpoints",
  help: `Usage: quarry webhooks list [--json]

Lists your webhook endpoints: id, URL, event types, whether enabled (and why not).

Options:
  --json        print the endpoints as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    const endpoints = await (await connect(flags, io)).webhooks.list();
    if (booleanFlag(flags, 'json')) {
      io.stdout.write(json(endpoints));
      return EXIT.ok;
    }
    io.stdout.write(
      formatTable(
        [{ header: 'id' }, { header: 'url' }, { header: 'events' }, { header: 'state' }],
        endpoints.map((e) => [
          e.id,
          e.url,
          e.event_types.length === 0 ? 'all' : e.event_types.join(','),
          e.enabled
            ? e.failing_since === null
              ? 'enabled'
              : `failing since ${e.failing_since}`
            : `disabled${e.disabled_reason ? `: ${e.disabled_reason}` : ''}`,
        ]),
      ),
    );
    return EXIT.ok;
  },
};

export const webhooksTestCommand: Command = {
  name: 'webhooks test',
  summary: 'send a webhook.test event to an endpoint',
  help: `Usage: quarry webhooks test <id> [--json]

Sends a signed webhook.test event to the endpoint and prints its event id (the webhook-id).
See what happened with \`quarry webhooks deliveries <id>\`.

Options:
  --json        print {"event_id": …}
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const eventId = await (await connect(flags, io)).webhooks.test(positionals[0] as string);
    io.stdout.write(
      booleanFlag(flags, 'json') ? json({ event_id: eventId }) : `Sent webhook.test ${eventId}.\n`,
    );
    return EXIT.ok;
  },
};

export const webhooksDeliveriesCommand: Command = {
  name: 'webhooks deliveries',
  summary: "an endpoint's delivery log (status, attempts, latency)",
  help: `Usage: quarry webhooks deliveries <id> [--limit N] [--json]

Shows the endpoint's latest deliveries, newest first: event, type, status, attempts, the last
answer or error and its latency.

Options:
  --limit N     how many (1–200, default 50)
  --json        print the deliveries as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { limit: { type: 'string' }, json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const limitText = stringFlag(flags, 'limit');
    const deliveries = await (await connect(flags, io)).webhooks.deliveries(
      positionals[0] as string,
      limitText === undefined ? undefined : Number(limitText),
    );
    if (booleanFlag(flags, 'json')) {
      io.stdout.write(json(deliveries));
      return EXIT.ok;
    }
    io.stdout.write(
      formatTable(
        [
          { header: 'event' },
          { header: 'type' },
          { header: 'status' },
          { header: 'attempts', right: true },
          { header: 'last' },
          { header: 'ms', right: true },
          { header: 'created' },
        ],
        deliveries.map((d) => [
          d.event_id,
          d.type,
          d.status,
          d.attempts,
          d.last_error ?? (d.last_status === null ? '' : String(d.last_status)),
          d.last_latency_ms,
          d.created_at,
        ]),
      ),
    );
    return EXIT.ok;
  },
};
