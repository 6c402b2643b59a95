// `quarry listings publish|unpublish` (an owner's analytics on the marketplace) and `quarry
// marketplace search|show` (what is listed, for anyone with a key).
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

const print = (io: { stdout: { write(s: string): unknown } }, value: unknown) =>
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

export const listingsPublishCommand: Command = {
  name: 'listings publish',
  summary: 'list one of your public analytics on the marketplace',
  help: `Usage: quarry listings publish <name> [--title T] [--category C] [--description D] [--tag T]… [--no-previews] [--json]

Publishes (or updates) the marketplace listing of your analytic <name>, which must be public.
Its price is the analytic's own \`price\`. Fields not given keep their value (or come from the
definition's title, description, category and example_params on the first publish).

Options:
  --title T         the listing's title
  --category C      its category
  --description D   its description
  --tag T           a tag (repeat)
  --no-previews     no free marketplace previews of it
  --json            print the listing as JSON
${CONNECTION_HELP}
  -h, --help        this help
`,
  options: {
    title: { type: 'string' },
    category: { type: 'string' },
    description: { type: 'string' },
    tag: { type: 'string', multiple: true },
    'no-previews': { type: 'boolean' },
    json: { type: 'boolean' },
    ...CONNECTION_OPTIONS,
  },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const client = await connect(flags, io);
    const name = positionals[0] as string;
    const fields: Record<string, unknown> = {};
    for (const field of ['title', 'category', 'description']) {
      const value = stringFlag(flags, field);
      if (value !== undefined) fields[field] = value;
    }
    const tags = listFlag(flags, 'tag');
    if (tags.length > 0) fields.tags = tags;
    if (booleanFlag(flags, 'no-previews')) fields.previews = false;
    if (fields.title === undefined || fields.category === undefined) {
      // The first publish needs a title and a category: the definition's, when it has them.
      const analytic = (await client.analytics.list()).find((a) => a.name === name);
      const d = analytic?.definition ?? {};
      if (fields.title === undefined) fields.title = typeof d.title === 'string' ? d.title : name;
      if (fields.category === undefined)
        fields.category = typeof d.category === 'string' ? d.category : 'general';
      if (fields.description === undefined && typeof d.description === 'string')
        fields.description = d.description;
      if (d.example_params !== null && typeof d.example_params === 'object')
        fields.example_params = d.example_params;
    }
    const listing = await client.listings.publish(name, fields);
    if (booleanFlag(flags, 'json')) print(io, listing);
    else
      io.stdout.write(
        `Listed ${listing.name} on the marketplace: "${listing.title}" (${listing.category}).\n`,
      );
    return EXIT.ok;
  },
};

export const listingsUnpublishCommand: Command = {
  name: 'listings unpublish',
  summary: 'take one of your analytics off the marketplace',
  help: `Usage: quarry listings unpublish <name> [--json]

The analytic keeps answering its callers; it is only no longer listed.

Options:
  --json        print the listing as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const client = await connect(flags, io);
    await client.listings.unpublish(positionals[0] as string);
    if (booleanFlag(flags, 'json')) print(io, { unpublished: positionals[0] });
    else io.stdout.write(`Took ${positionals[0]} off the marketplace.\n`);
    return EXIT.ok;
  },
};

export const marketplaceSearchCommand: Command = {
  name: 'marketplace search',
  summary: 'search the marketplace listings',
  help: `Usage: quarry marketplace search [text] [--category C] [--json]

Listings whose title, description, name or a tag contain <text> (all of them without it).

Options:
  --category C   only this category
  --json         print the listings as JSON
${CONNECTION_HELP}
  -h, --help     this help
`,
  options: { category: { type: 'string' }, json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 0, max: 1 },
  async run({ flags, positionals }, io) {
    const client = await connect(flags, io);
    const category = stringFlag(flags, 'category');
    const listings = await client.marketplace.search({
      ...(positionals[0] === undefined ? {} : { q: positionals[0] }),
      ...(category === undefined ? {} : { category }),
    });
    if (booleanFlag(flags, 'json')) print(io, listings);
    else
      io.stdout.write(
        formatTable(
          [{ header: 'name' }, { header: 'title' }, { header: 'category' }, { header: 'price', right: true }],
          listings.map((l) => [l.name, l.title, l.category, l.price]),
        ),
      );
    return EXIT.ok;
  },
};

export const marketplaceShowCommand: Command = {
  name: 'marketplace show',
  summary: 'show one listing: description, params, price, an example call',
  help: `Usage: quarry marketplace show <name> [--json]

Options:
  --json        print the listing as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const listing = await (await connect(flags, io)).marketplace.get(positionals[0] as string);
    if (booleanFlag(flags, 'json')) {
      print(io, listing);
      return EXIT.ok;
    }
    const lines = [
      `${listing.name}: ${listing.title}`,
      `category ${listing.category} · price ${String(listing.price)} credits a call`,
    ];
    if (typeof listing.description === 'string' && listing.description !== '')
      lines.push('', listing.description);
    if (listing.params !== undefined) lines.push('', `params: ${JSON.stringify(listing.params)}`);
    lines.push('', `example: ${JSON.stringify(listing.example_request.body)}`);
    io.stdout.write(`${lines.join('\n')}\n`);
    return EXIT.ok;
  },
};
