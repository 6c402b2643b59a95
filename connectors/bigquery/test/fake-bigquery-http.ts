// Test code for fake-bigquery-server.ts: HTTP plumbing — JSON answers, errors in Google's API
// shape (`{"error": {"code", "message", "errors": [{"message", "domain", "reason"}], "status"}}`),
// bounded request bodies, and a bounded wait.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FakeJobError } from './fake-bigquery-rows.js';

const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ALREADY_EXISTS',
};
/** The HTTP status BigQuery answers a job error's reason with (400 for the rest). */
export const REASON_STATUS: Readonly<Record<string, number>> = {
  notFound: 404,
  accessDenied: 403,
  duplicate: 409,
};
const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** A request the fake refuses, answered in Google's error shape. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** Answers `body` as JSON. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Answers an error in Google's API error shape. */
export function sendGoogleError(res: ServerResponse, status: number, reason: string, message: string): void {
  sendJson(res, status, {
    error: {
      code: status,
      message,
      errors: [{ message, domain: 'global', reason }],
      status: STATUS_NAMES[status] ?? 'FAILED_PRECONDITION',
    },
  });
}

/** The request body as text (at most 10 MB). */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'invalid', 'Request too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Resolves when `promise` settles or `ms` pass, whichever is first. */
export async function waitFor(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([promise, elapsed]);
  clearTimeout(timer);
}

/** A job error as BigQuery writes it in `status.errorResult` and `status.errors`. */
export function errorJson(error: FakeJobError): { reason: string; message: string } {
  return { reason: error.reason, message: error.message };
}
