// The assertion every error response must pass (docs/design.md §2): its status, its code, a
// non-empty message, and a request id equal to the X-Request-Id header.
import { expect } from 'vitest';
import type { HttpResponse } from './http-client.js';

export function expectErrorEnvelope(response: HttpResponse, status: number, code: string): void {
  expect({ status: response.status, code: response.body?.error?.code }, response.text).toEqual({
    status,
    code,
  });
  expect(typeof response.body.error.message).toBe('string');
  expect(response.body.error.message.length).toBeGreaterThan(0);
  const header = response.headers.get('x-request-id');
  expect(header).toBeTruthy();
  expect(response.body.error.request_id).toBe(header);
}
