// The connection config an owner gives for a MySQL or MariaDB warehouse, validated once when the
// connection is created. The password and TLS private key are secret fields: redacted from logs
// and listings, never echoed in errors.
import { fieldUi, secretField } from '@quarry/sdk-connector';
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
  host: fieldUi(z.string().min(1), {
    label: 'Host',
    help: "The server's name or address, as this gateway reaches it.",
    placeholder: 'db.example.com',
    order: 1,
  }),
  port: fieldUi(z.number().int().min(1).max(65_535), {
    label: 'Port',
    placeholder: '3306',
    order: 2,
  }).default(3306),
  database: fieldUi(z.string().min(1), { label: 'Database', placeholder: 'shop', order: 3 }),
  user: fieldUi(z.string().min(1), {
    label: 'User',
    help: 'Give it SELECT-only grants: analytics only ever read.',
    placeholder: 'quarry_reader',
    order: 4,
  }),
  password: fieldUi(z.string(), { label: 'Password', secret: true, order: 5 }).optional(),
  /** `true` for TLS with the system CAs, or TLS options. */
  ssl: fieldUi(sslSchema, {
    label: 'TLS',
    help: 'Encrypt the connection. Leave it at the default unless your server needs otherwise.',
    input: 'select',
    options: [
      { value: true, label: "On, verifying the server certificate against the system's CAs" },
      { value: { rejectUnauthorized: false }, label: 'On, without verifying the certificate' },
      { value: false, label: 'Off' },
    ],
    order: 20,
  }).optional(),
  /** How long to wait for the TCP connect and handshake (default 10,000 ms). */
  connectTimeoutMs: fieldUi(z.number().int().positive().max(600_000), {
    label: 'Connect timeout (ms)',
    help: 'How long to wait for the connection and handshake (default 10,000).',
    placeholder: '10000',
    advanced: true,
    order: 30,
  }).optional(),
});

/** A validated MySQL/MariaDB connection config. */
export type MysqlConfig = z.output<typeof mysqlConfigSchema>;
