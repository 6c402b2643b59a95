// How a case's `traffic.requests` lines match what a client sent: keys in any order (Go sorts
// them), `<nonempty>` for an opaque value such as a cursor, everything else exact.
import { describe, expect, it } from 'vitest';
import { checkTraffic, type LoggedRequest, sameRequestLine } from './traffic-check.js';

const logged = (line: string) => ({ line }) as LoggedRequest;

describe('sameRequestLine', () => {
  it('matches query-string keys in another order, a repeated key keeping its values in order', () => {
    expect(sameRequestLine('GET /v1/c?b=2&a=1 200', 'GET /v1/c?a=1&b=2 200')).toBe(true);
    expect(sameRequestLine('GET /v1/e?tags=a&tags=b&year=1 200', 'GET /v1/e?year=1&tags=a&tags=b 200')).toBe(
      true,
    );
    expect(sameRequestLine('GET /v1/e?tags=a&tags=b 200', 'GET /v1/e?tags=b&tags=a 200')).toBe(false);
  });

  it('takes <nonempty> for any non-empty value, and nothing else loosely', () => {
    const line = 'GET /v1/account/calls?limit=2&cursor=<nonempty> 200';
    expect(sameRequestLine(line, 'GET /v1/account/calls?cursor=WyIy&limit=2 200')).toBe(true);
    expect(sameRequestLine(line, 'GET /v1/account/calls?cursor=&limit=2 200')).toBe(false);
    expect(sameRequestLine(line, 'GET /v1/account/calls?limit=2 200')).toBe(false);
    expect(sameRequestLine(line, 'GET /v1/account/calls?limit=2&cursor=x&cursor=y 200')).toBe(false);
    expect(sameRequestLine('GET /v1/a?limit=2 200', 'GET /v1/a?limit=2 404')).toBe(false);
    expect(sameRequestLine('GET /v1/a?limit=2 200', 'GET /v1/b?limit=2 200')).toBe(false);
    expect(sameRequestLine('POST /v1/query 200', 'POST /v1/query lost')).toBe(false);
  });
});

describe('checkTraffic requests', () => {
  it('wants the same number of requests, each matching in order', () => {
    const expected = { requests: ['GET /v1/a?x=1 200', 'GET /v1/a?x=1&c=<nonempty> 200'] };
    expect(checkTraffic(expected, [logged('GET /v1/a?x=1 200'), logged('GET /v1/a?c=q&x=1 200')])).toEqual(
      [],
    );
    expect(checkTraffic(expected, [logged('GET /v1/a?x=1 200')])).toHaveLength(1);
    expect(
      checkTraffic(expected, [
        logged('GET /v1/a?x=1 200'),
        logged('GET /v1/a?c=q&x=1 200'),
        logged('GET /v1/a?c=r&x=1 200'),
      ]),
    ).toHaveLength(1);
  });
});
