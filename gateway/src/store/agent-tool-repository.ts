// The analytics of other owners an account chose as its agents' MCP tools (account_tools), and
// the account's MCP settings (account_mcp_settings: the default price limit of a tool call).
// Its own analytics are tools without a row. Every change is appended to the change log
// (`agent_tools`, the account id), so every instance's MCP sessions follow it.
import { createChangeLogRepository } from './change-log-repository.js';
import type { SqlExecutor } from './sql-client.js';

/** What an account chose for its agents. */
export interface AgentChoice {
  /** Names of the analytics of other owners the account added (callable or not today). */
  readonly added: ReadonlySet<string>;
  /** The price limit of an MCP tool call that names no `max_credits`; undefined: none. */
  readonly maxCredits: number | undefined;
}

export interface AgentToolRepository {
  /** Adds `name` to the account's tools; false when it was there already. */
  add(accountId: string, name: string): Promise<boolean>;
  /** Removes `name`; false when it was not there. */
  remove(accountId: string, name: string): Promise<boolean>;
  /** The account's added names and MCP default, in one read. */
  choice(accountId: string): Promise<AgentChoice>;
  /** Sets (or clears, with null) the default price limit of the account's MCP tool calls. */
  setMaxCredits(accountId: string, maxCredits: number | null): Promise<void>;
}

export function createAgentToolRepository(sql: SqlExecutor): AgentToolRepository {
  return {
    add(accountId, name) {
      return sql.transaction(async (tx) => {
        const rows = await tx.query(
          `INSERT INTO account_tools (account_id, name) VALUES ($1, $2)
           ON CONFLICT (account_id, name) DO NOTHING RETURNING name`,
          [accountId, name],
        );
        if (rows.length > 0) await createChangeLogRepository(tx).append('agent_tools', accountId);
        return rows.length > 0;
      });
    },

    remove(accountId, name) {
      return sql.transaction(async (tx) => {
        const rows = await tx.query(
          'DELETE FROM account_tools WHERE account_id = $1 AND name = $2 RETURNING name',
          [accountId, name],
        );
        if (rows.length > 0) await createChangeLogRepository(tx).append('agent_tools', accountId);
        return rows.length > 0;
      });
    },

    async choice(accountId) {
      const rows = await sql.query<{ readonly name: string | null; readonly max_credits: string | null }>(
        `SELECT t.name, NULL::bigint AS max_credits FROM account_tools t WHERE t.account_id = $1
         UNION ALL
         SELECT NULL, s.max_credits FROM account_mcp_settings s WHERE s.account_id = $1`,
        [accountId],
      );
      const added = new Set<string>();
      let maxCredits: number | undefined;
      for (const row of rows) {
        if (row.name !== null) added.add(row.name);
        else if (row.max_credits !== null) maxCredits = Number(row.max_credits);
      }
      return { added, maxCredits };
    },

    setMaxCredits(accountId, maxCredits) {
      return sql.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO account_mcp_settings (account_id, max_credits, updated_at) VALUES ($1, $2, now())
           ON CONFLICT (account_id) DO UPDATE SET max_credits = EXCLUDED.max_credits, updated_at = now()`,
          [accountId, maxCredits],
        );
        await createChangeLogRepository(tx).append('agent_tools', accountId);
      });
    },
  };
}
