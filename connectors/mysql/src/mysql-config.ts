// The connection config an owner gives for a MySQL or MariaDB warehouse, validated once when the
// connection is created. The password and TLS private key are secret fields: redacted from logs
// and listings, never echoed in errors.
import { secretField } from '@quarry/sdk-connector';
import { z } from 'zod';

const sslSchema = z.union([
  z.boolean(),
  z.strictObject({
    /** PEM CA certificate(s) to trust instead of the system store. */
    ca: z.string().optional(),
    /** PEM client certificate, for servers that require client certificates. */
    cert: z.string().optional(),
    key: secretField(z.string()).optional(),
    /** Defaults to true; turning it off accepts any server certificate. */
    rejectUnauthorized: z.boolean().optional(),
    servername: z.string().optional(),
  }),
]);

/** Config of one MySQL/MariaDB connection. */
export const mysqlConfigSchema = z.strictObject({
  host: z.string().min(1),
  port: z.number().int().min(1).max(65_535).default(3306),
  database: z.string().min(1),
  user: z.string().min(1),
  password: secretField(z.string()).optional(),
  /** `true` for TLS with the system CAs, or TLS options. */
  ssl: sslSchema.optional(),
  /** How long to wait for the TCP connect and handshake (default 10,000 ms). */
  connectTimeoutMs: z.number().int().positive().max(600_000).optional(),
});

/** A validated MySQL/MariaDB connection config. */
export type MysqlConfig = z.output<typeof mysqlConfigSchema>;
