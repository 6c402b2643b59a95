// Owner patterns: a string param's `pattern` is a stranger's text that runs against every caller's
// value, in the gateway's one event loop. A backtracking engine (JavaScript's RegExp) takes
// exponential time on patterns like `(a+)+$`: 32 characters held every tenant's requests for
// seconds. So patterns run on re2js, a pure-JS port of RE2, whose time is linear in the value,
// and that linear time is bounded too: its factor is the pattern's compiled size (when the engine's
// DFA cache thrashes, re2js falls back to simulating every instruction for every character), so
// compiled size × characters is bounded per value at deploy and per call at run time.
import { RE2JS, RE2JSException } from 're2js';

/** The longest `pattern` an owner may declare, in UTF-16 code units. */
export const MAX_PATTERN_LENGTH = 512;

/**
 * The most instructions a pattern may compile to (RE2's program size): matching costs up to this
 * many steps per character. Counted repetitions are what make programs large (`[a-z]{1,1000}` is
 * 2,001): bound a value's length with `maxLength` instead. See also {@link MAX_PATTERN_WORK}.
 */
export const MAX_PATTERN_PROGRAM_SIZE = 1000;

/**
 * The most instructions the patterns of one param schema may compile to together: every pattern is
 * compiled when an analytic is deployed (bench/README.md has the cost per instruction).
 */
export const MAX_SCHEMA_PATTERN_SIZE = 10_000;

/**
 * The longest string value any string param accepts, in characters (code points), whatever its
 * `maxLength`; an owner may not declare a longer `maxLength`. The default `maxLength` is 1,000.
 */
export const MAX_STRING_LENGTH = 4096;

/**
 * How much pattern matching one value, and one call's values together, may cost, in compiled size
 * × characters: a pattern of 64 instructions on a value of {@link MAX_STRING_LENGTH}. At deploy, a
 * pattern whose size × its `maxLength` exceeds it is refused; at run time, values past it in one
 * call (long arrays) are refused. The worst patterns within it (`(?:.*a.{28}){2}`, whose DFA
 * thrashes) took 20–35 ms a call on the 2-core development machine, against 9 s for 32 characters
 * of `(a+)+$` on a backtracking engine. Small patterns hardly notice: `^[A-Z]{2}$` compiles to 6.
 */
export const MAX_PATTERN_WORK = 64 * MAX_STRING_LENGTH;

/** A compiled owner pattern. */
export interface OwnerPattern {
  /** The pattern as the owner wrote it. */
  readonly source: string;
  /** Its compiled size (RE2 instructions): the factor of its linear matching time. */
  readonly programSize: number;
  /** Whether the whole of `value` matches, in time linear in `value`'s length. */
  matches(value: string): boolean;
}

/** The outcome of {@link compileOwnerPattern}: the pattern, or why it cannot run. */
export type OwnerPatternResult =
  | { readonly ok: true; readonly pattern: OwnerPattern }
  | { readonly ok: false; readonly problem: string };

// Checked only after RE2 refused a pattern, to say why in the owner's terms.
const BACKREFERENCE = /\\[1-9]|\\k</;
const LOOKAROUND = /\(\?<?[=!]/;

/**
 * Compiles an owner's pattern for whole-value matching (as if written `^(?:pattern)$`), in RE2
 * syntax: no backreferences, no lookahead or lookbehind; `.` is any character but a newline; `\d`,
 * `\w`, `\s` and `\b` are ASCII; `\p{L}` and other Unicode classes work on code points; `(?i)` makes
 * it case-insensitive. Refuses patterns longer than {@link MAX_PATTERN_LENGTH} or compiling to more
 * than {@link MAX_PATTERN_PROGRAM_SIZE} instructions, with a message an owner can act on (it starts
 * with "pattern"), returned rather than thrown. Whether a pattern fits a param's `maxLength` is
 * {@link MAX_PATTERN_WORK}'s business, checked by `checkParamSchema`.
 */
export function compileOwnerPattern(source: string): OwnerPatternResult {
  if (source.length > MAX_PATTERN_LENGTH) {
    return refuse(`pattern is ${source.length} characters long; at most ${MAX_PATTERN_LENGTH} are allowed`);
  }
  // Compiling takes time in proportion to the program, and a short pattern can ask for a huge one
  // (`\p{L}{1000}` forty times: 46,000 instructions, 0.5 s), so those are refused before compiling.
  const estimate = estimateProgramSize(source);
  if (estimate > 2 * MAX_PATTERN_PROGRAM_SIZE) return tooComplex(`about ${estimate}`);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source);
  } catch (error) {
    if (!(error instanceof RE2JSException)) throw error;
    return refuse(unsupported(source, error.message.replace(/^error parsing regexp: /, '')));
  }
  const programSize = compiled.programSize();
  if (programSize > MAX_PATTERN_PROGRAM_SIZE) return tooComplex(String(programSize));
  return {
    ok: true,
    pattern: Object.freeze({
      source,
      programSize,
      // testExact anchors both ends in the program itself, so an alternation `EU|US` matches only
      // "EU" or "US" whole, and `(?m)` inside the pattern cannot loosen it.
      matches: (value: string) => compiled.testExact(value),
    }),
  };
}

function refuse(problem: string): OwnerPatternResult {
  return { ok: false, problem };
}

function tooComplex(size: string): OwnerPatternResult {
  return refuse(
    `pattern is too complex: it compiles to ${size} instructions, more than ${MAX_PATTERN_PROGRAM_SIZE}` +
      ' (bound the length with maxLength rather than a counted repetition like {1,1000})',
  );
}

function unsupported(source: string, reason: string): string {
  const why = 'which RE2 syntax does not support (patterns run on a linear-time engine)';
  if (BACKREFERENCE.test(source)) return `pattern ${source} uses a backreference, ${why}: ${reason}`;
  if (LOOKAROUND.test(source)) return `pattern ${source} uses lookahead or lookbehind, ${why}: ${reason}`;
  return `pattern ${source} is not valid RE2 syntax: ${reason}`;
}

/**
 * About how many instructions `source` compiles to, from its text alone and generous: each atom
 * counts 1, a group the sum of its parts and one, `*` `+` `?` `|` one more, and `{n,m}` repeats
 * what precedes it m times. Only meant to catch counted repetitions that would take long to
 * compile; the compiled program's own size is the real check.
 */
export function estimateProgramSize(source: string): number {
  interface Frame {
    total: number;
    last: number;
  }
  const stack: Frame[] = [];
  let frame: Frame = { total: 0, last: 0 };
  const atom = (weight: number): void => {
    frame.total += frame.last;
    frame.last = weight;
  };
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (c === '\\') {
      if (source[i + 1] === 'Q') {
        // \Q…\E: literal text, one instruction a character.
        const end = source.indexOf('\\E', i + 2);
        const stop = end === -1 ? source.length : end;
        atom(Math.max(stop - i - 2, 1));
        i = end === -1 ? source.length : end + 2;
        continue;
      }
      let next = i + 2;
      if ('pPx'.includes(source[i + 1] ?? '') && source[next] === '{') {
        const close = source.indexOf('}', next);
        next = close === -1 ? source.length : close + 1;
      }
      atom(1);
      i = next;
    } else if (c === '[') {
      atom(1);
      i = classEnd(source, i);
    } else if (c === '(') {
      let next = i + 1;
      if (source[next] === '?') {
        const named = source[next + 1] === 'P' || source[next + 1] === '<';
        const end = named ? source.indexOf('>', next) : firstOf(source, next, ':)');
        if (end !== -1 && source[end] === ')') {
          // A flag group like (?i): no instructions.
          i = end + 1;
          continue;
        }
        next = end === -1 ? source.length : end + 1;
      }
      stack.push(frame);
      frame = { total: 0, last: 0 };
      i = next;
    } else if (c === ')') {
      const group = frame.total + frame.last;
      frame = stack.pop() ?? { total: 0, last: 0 };
      atom(group + 1);
      i++;
    } else if (c === '|') {
      frame.total += frame.last + 1;
      frame.last = 0;
      i++;
    } else if (c === '*' || c === '+' || c === '?') {
      frame.last += 1;
      i++;
    } else if (c === '{') {
      const repeat = /^\{(\d{1,7})(?:(,)(\d{0,7}))?\}/.exec(source.slice(i, i + 17));
      if (repeat === null) {
        atom(1);
        i++;
        continue;
      }
      const low = Number(repeat[1]);
      const high = repeat[2] === undefined ? low : repeat[3] === '' ? low + 1 : Number(repeat[3]);
      // n copies, then one optional copy (and one more instruction) for each of the m − n.
      frame.last = frame.last * Math.max(low, high, 1) + Math.max(high - low, 0);
      i += repeat[0].length;
    } else {
      atom(1);
      i++;
    }
  }
  let total = frame.total + frame.last;
  // Unclosed groups: the compiler refuses them; count what is there.
  for (const open of stack) total += open.total + open.last;
  return total;
}

/** The index just past the character class starting at `start` (`[`), or the end of the text. */
function classEnd(source: string, start: number): number {
  let i = start + 1;
  if (source[i] === '^') i++;
  // A `]` first in the class is a literal.
  if (source[i] === ']') i++;
  while (i < source.length && source[i] !== ']') {
    if (source[i] === '\\') i += 2;
    else if (source.startsWith('[:', i)) {
      const close = source.indexOf(':]', i + 2);
      i = close === -1 ? i + 1 : close + 2;
    } else i++;
  }
  return i + 1;
}

function firstOf(source: string, from: number, chars: string): number {
  for (let i = from; i < source.length; i++) if (chars.includes(source[i] ?? '')) return i;
  return -1;
}

// Compiled once per process, not per request. Bounded both in count and in total program size,
// which also bounds the memory re2js's per-pattern DFA caches grow to; the oldest is dropped first.
const CACHE_MAX_ENTRIES = 1000;
const CACHE_MAX_PROGRAM_SIZE = 2 * MAX_SCHEMA_PATTERN_SIZE;
const cache = new Map<string, OwnerPattern | undefined>();
let cachedProgramSize = 0;

/**
 * The compiled pattern for `source` from a bounded per-process cache, or undefined when it cannot
 * run (callers treat that as "no value matches": fail closed).
 */
export function cachedOwnerPattern(source: string): OwnerPattern | undefined {
  // Never a key: a schema that skipped checkParamSchema could hold a pattern of any size.
  if (source.length > MAX_PATTERN_LENGTH) return undefined;
  const hit = cache.get(source);
  if (hit !== undefined || cache.has(source)) return hit;
  const result = compileOwnerPattern(source);
  const pattern = result.ok ? result.pattern : undefined;
  const weight = pattern?.programSize ?? 1;
  while (
    cache.size > 0 &&
    (cache.size >= CACHE_MAX_ENTRIES || cachedProgramSize + weight > CACHE_MAX_PROGRAM_SIZE)
  ) {
    const [oldest, entry] = cache.entries().next().value as [string, OwnerPattern | undefined];
    cache.delete(oldest);
    cachedProgramSize -= entry?.programSize ?? 1;
  }
  cache.set(source, pattern);
  cachedProgramSize += weight;
  return pattern;
}

/** How many patterns the cache holds and their total program size (for tests). */
export function ownerPatternCacheStats(): { readonly entries: number; readonly programSize: number } {
  return { entries: cache.size, programSize: cachedProgramSize };
}
