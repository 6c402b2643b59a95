// The world every OWASP API Security Top 10 (2023) file attacks: a real gateway process on a
// fresh control-plane schema of the real PostgreSQL, an owner with a warehouse connection (the
// local PostgreSQL) and four analytics — public and listed, private, shared with a friend, and
// one whose rows a hostile warehouse shapes — and two strangers: the attacker and the friend.
// Each file gets its own world (its own schema and process), so attacks never depend on one
// another, and tears it down at the end.
import { randomBytes } from 'node:crypto';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from '../../support/control-plane.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from '../../support/gateway-process.js';
import {
  createHttpClient,
  type HttpClient,
  type HttpResponse,
  type RequestOptions,
} from '../../support/http-client.js';
import { connectTestPostgres, deployAnalytic, expectStatus } from '../../support/metering-fixture.js';
import { uniqueSuffix } from '../../support/test-services.js';

export interface WorldAccount {
  readonly id: string;
  readonly email: string;
  /** The account's first key (every scope). */
  readonly key: string;
  readonly keyId: string;
}

export interface AttackWorld {
  readonly gateway: GatewayProcess;
  readonly http: HttpClient;
  readonly schema: ControlPlaneSchema;
  /** Owns the connection `wh` and the analytics below. */
  readonly owner: WorldAccount;
  /** A stranger: may call only what is public or listed. */
  readonly attacker: WorldAccount;
  /** A second stranger the owner shares `shared` with. */
  readonly friend: WorldAccount;
  /** The owner's connection to the local PostgreSQL. */
  readonly connectionId: string;
  readonly names: {
    /** Public and listed on the marketplace, previews on. */
    readonly listed: string;
    /** Private to the owner. */
    readonly private: string;
    /** Shared with `friend` only. */
    readonly shared: string;
  };
  /** The owner's operator token (QUARRY_ADMIN_TOKEN), which no caller has. */
  readonly adminToken: string;
  call(method: string, path: string, options?: RequestOptions): Promise<HttpResponse>;
  signUp(label: string): Promise<WorldAccount>;
  stop(): Promise<void>;
}

export interface AttackWorldOptions {
  /** A short lowercase label for the schema name. */
  readonly label: string;
  /** Extra gateway environment (over the test defaults). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * false: no connection and no analytics (for a gateway whose settings refuse the local
   * warehouse); `connectionId` is then '' and `names` name nothing deployed.
   */
  readonly warehouse?: boolean;
}

export async function createAttackWorld(options: AttackWorldOptions): Promise<AttackWorld> {
  const suffix = uniqueSuffix();
  const schema = await createControlPlaneSchema(`quarry_sec_${options.label}_${suffix}`);
  const adminToken = randomBytes(24).toString('hex');
  const http = createHttpClient();
  let gateway: GatewayProcess | undefined;
  try {
    gateway = await startGateway({
      env: {
        ...postgresStoreEnv(schema.databaseUrl, randomBytes(32).toString('base64')),
        QUARRY_ADMIN_TOKEN: adminToken,
        QUARRY_LOG_LEVEL: 'warn',
        ...options.env,
      },
      readyTimeoutMs: 90_000,
    });
    const g = gateway;
    const call = (method: string, path: string, request: RequestOptions = {}) =>
      http.request(g.url, method, path, request);
    const signUp = async (label: string): Promise<WorldAccount> => {
      const email = `${label}-${suffix}@security.quarry.test`;
      const res = expectStatus(
        await call('POST', '/v1/accounts', { json: { email, name: label } }),
        201,
        `sign up ${label}`,
      );
      return { id: res.body.account.id, email, key: res.body.key.secret, keyId: res.body.key.id };
    };
    const owner = await signUp('owner');
    const attacker = await signUp('attacker');
    const friend = await signUp('friend');
    const names = {
      listed: `sec-listed-${suffix}`,
      private: `sec-private-${suffix}`,
      shared: `sec-shared-${suffix}`,
    };
    const world = {
      gateway: g,
      http,
      schema,
      owner,
      attacker,
      friend,
      connectionId: '',
      names,
      adminToken,
      call,
      signUp,
      async stop() {
        await g.stop();
        await schema.drop();
      },
    };
    if (options.warehouse === false) return world;
    await connectTestPostgres(http, g, owner.key, 'wh');
    const connections = await call('GET', '/v1/owner/connections', { key: owner.key });
    const connectionId: string = connections.body.connections[0].id;
    const rows = `SELECT g AS n, 'row ' || g AS label FROM generate_series(1, 30) AS g
                   WHERE g <= :upto ORDER BY g`;
    const params = { upto: { type: 'integer', min: 1, max: 30, default: 30 } };
    await deployAnalytic(http, g, owner.key, {
      name: names.listed,
      connection: 'wh',
      sql: rows,
      params,
      visibility: 'public',
    });
    await deployAnalytic(http, g, owner.key, {
      name: names.private,
      connection: 'wh',
      sql: "SELECT 'owner secret' AS secret",
    });
    await deployAnalytic(http, g, owner.key, {
      name: names.shared,
      connection: 'wh',
      sql: "SELECT 'for friends' AS note",
      visibility: 'shared',
      shared_with: [friend.id],
    });
    expectStatus(
      await call('PUT', `/v1/owner/analytics/${names.listed}/listing`, {
        key: owner.key,
        json: { title: 'Numbers', description: 'Thirty numbers.', category: 'Testing' },
      }),
      200,
      'list the analytic',
    );
    return { ...world, connectionId };
  } catch (error) {
    await gateway?.stop();
    await schema.drop();
    throw error;
  }
}

/** The usage events recorded in the world's store for `accountId`, straight from PostgreSQL. */
export function usageEventsOf(world: AttackWorld, accountId: string): Promise<number> {
  return withPg(async (c) => {
    const { rows } = await c.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${world.schema.schema}.usage_events WHERE account_id = $1`,
      [accountId],
    );
    return rows[0]?.n ?? 0;
  });
}
