// CSV quoting (RFC 4180) and when a caller gets CSV rather than JSON.
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors/api-error.js';
import { csvCell, toCsv, wantsCsv } from './csv.js';

describe('toCsv', () => {
  it('quotes only cells with commas, quotes or line breaks, doubling quotes', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(null)).toBe('');
    expect(csvCell(42)).toBe('42');
    expect(
      toCsv(
        ['a', 'b'],
        [
          ['x,y', 1],
          [null, 'z'],
        ],
      ),
    ).toBe('a,b\r\n"x,y",1\r\n,z\r\n');
  });
});

describe('wantsCsv', () => {
  const app = new Hono();
  app.get('/', (c) => c.text(String(wantsCsv(c))));
  app.onError((error, c) => c.text(error instanceof ApiError ? error.code : 'other', 400));
  const ask = async (query: string, accept?: string) =>
    (await app.request(`/${query}`, accept === undefined ? {} : { headers: { accept } })).text();

  it('follows ?format first, then the Accept header', async () => {
    expect(await ask('?format=csv')).toBe('true');
    expect(await ask('?format=json', 'text/csv')).toBe('false');
    expect(await ask('', 'text/csv')).toBe('true');
    expect(await ask('', 'application/json, text/csv;q=0.1')).toBe('true');
    expect(await ask('', 'text/csv;q=0')).toBe('false');
    expect(await ask('', 'application/json')).toBe('false');
    expect(await ask('')).toBe('false');
    expect(await ask('?format=xml')).toBe('INVALID_REQUEST');
  });
});
