// Record ids: a type prefix and 128 random bits in base62 (`acc_…`, `key_…`, `con_…`, `ana_…`),
// so an id says what it names in logs and support tickets and is never guessable.
import { randomBytes } from 'node:crypto';
import { encodeBase62 } from '../security/base62.js';

/** The kinds of record that get ids, by prefix. */
export type IdPrefix = 'acc' | 'key' | 'con' | 'ana' | 'ses' | 'job';

/** A fresh random id such as `acc_3kTMd9Qp…` (prefix, underscore, 22 base62 digits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${encodeBase62(randomBytes(16), 22)}`;
}
