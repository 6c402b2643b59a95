import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { etagOfJson, matchesIfNoneMatch } from './etag.js';

const data = {
  results: [{ region: 'EU', revenue: 1234.5 }],
  columns: [
    { name: 'region', type: 'string' },
    { name: 'revenue', type: 'number' },
  ],
  insights: { EU: { revenue: 1234.5 } },
  version: 2,
};

/** The tag of an answer's data, serialised as the body carries it. */
const etagFor = (d: { results: unknown; columns: unknown; insights?: unknown; version: number }) =>
  etagOfJson(d.version, JSON.stringify({ results: d.results, insights: d.insights, columns: d.columns }));

describe('etagOfJson over an answer', () => {
  it('is a quoted strong tag that is the same for the same data', () => {
    const tag = etagFor(data);
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(etagFor(structuredClone(data))).toBe(tag);
  });

  it('changes when the results, columns, insights or version change', () => {
    const tag = etagFor(data);
    expect(etagFor({ ...data, results: [{ region: 'EU', revenue: 1234.6 }] })).not.toBe(tag);
    expect(etagFor({ ...data, columns: [] })).not.toBe(tag);
    expect(etagFor({ ...data, insights: undefined })).not.toBe(tag);
    expect(etagFor({ ...data, version: 3 })).not.toBe(tag);
  });

  it('is SHA-256 of the version line and the data, for short answers and for long ones alike', () => {
    // Clients keep tags across restarts and upgrades: the one-shot hash of a short answer and the
    // streamed hash of a long one must both give this tag.
    const reference = (version: number, json: string) =>
      `"${createHash('sha256').update(`${version}\n${json}`).digest('base64url')}"`;
    for (const json of ['{"results":[]}', `{"results":["${'é'.repeat(70_000)}"]}`]) {
      expect(etagOfJson(7, json)).toBe(reference(7, json));
    }
  });
});

describe('matchesIfNoneMatch', () => {
  const tag = '"abc"';

  it('matches the same tag, weak or strong', () => {
    expect(matchesIfNoneMatch('"abc"', tag)).toBe(true);
    expect(matchesIfNoneMatch('W/"abc"', tag)).toBe(true);
    expect(matchesIfNoneMatch('"abc"', 'W/"abc"')).toBe(true);
  });

  it('matches anywhere in a list, and * always', () => {
    expect(matchesIfNoneMatch('"x", W/"y" ,"abc"', tag)).toBe(true);
    expect(matchesIfNoneMatch('"x","y"', tag)).toBe(false);
    expect(matchesIfNoneMatch('*', tag)).toBe(true);
  });

  it('does not match a missing, empty or different header', () => {
    expect(matchesIfNoneMatch(undefined, tag)).toBe(false);
    expect(matchesIfNoneMatch('', tag)).toBe(false);
    expect(matchesIfNoneMatch('"abcd"', tag)).toBe(false);
    expect(matchesIfNoneMatch('"ab"', tag)).toBe(false);
  });

  it('reads a quoted tag holding a comma as one tag', () => {
    expect(matchesIfNoneMatch('"a,b"', '"a,b"')).toBe(true);
    expect(matchesIfNoneMatch('"a,b"', '"a"')).toBe(false);
    expect(matchesIfNoneMatch('"a,b", "c"', '"c"')).toBe(true);
  });

  it('tolerates unquoted tags', () => {
    expect(matchesIfNoneMatch('abc', tag)).toBe(true);
    expect(matchesIfNoneMatch('x, abc', tag)).toBe(true);
  });

  it('works with the tags etagOfJson makes', () => {
    const real = etagFor({ results: [], columns: [], version: 1 });
    expect(matchesIfNoneMatch(`W/${real}, "other"`, real)).toBe(true);
    expect(matchesIfNoneMatch(etagFor({ results: [1], columns: [], version: 1 }), real)).toBe(false);
  });
});

describe('etagOfJson', () => {
  it('is a strong quoted tag that changes with the data and with the version, and only then', () => {
    const json = '{"source":"s","results":[{"a":1}],"columns":[]}';
    const tag = etagOfJson(1, json);
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(etagOfJson(1, json)).toBe(tag);
    expect(etagOfJson(2, json)).not.toBe(tag);
    expect(etagOfJson(1, json.replace('1', '2'))).not.toBe(tag);
    expect(matchesIfNoneMatch(`W/${tag}`, tag)).toBe(true);
  });
});
