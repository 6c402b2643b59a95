// Strings an attacker would send as parameter values, built from families (quotes, comments,
// stacked statements, UNION, sleep calls of every dialect, look-alike quotes, control characters,
// long values, placeholder look-alikes). Bound as values they must be inert; spliced into SQL any
// of them would change what runs, so they prove a connector binds instead of splicing.

/** Options for {@link hostileStrings}. */
export interface HostileStringsOptions {
  /** The table that stacked-statement payloads try to drop or change (default `conformance`). */
  readonly table?: string;
  /** A real value of the filtered column; payloads prefixed with it return rows if spliced (default `alpha`). */
  readonly knownValue?: string;
  /** The longest string generated, in UTF-16 code units (default 1,000: the default string `maxLength`). */
  readonly maxLength?: number;
}

const QUOTES = [
  "'",
  "''",
  "'''",
  '"',
  '""',
  '`',
  '``',
  "\\'",
  "\\\\'",
  '\\',
  '\\\\',
  "'\\",
  '\\"',
  "\\''",
  "'||'",
  "'+'",
  "' '",
  '$$',
  '$q$',
  "E'",
  "N'",
  "X'",
];

const COMMENTS = ['--', '-- ', '--\n', '/*', '*/', '/* */', '/*!50000 */', '#', '# ', ';--', '/*/', '*/*/'];

const UNIONS = [
  "' OR '1'='1",
  "' OR 1=1 --",
  "' OR 1=1 #",
  "' OR 1=1 /*",
  '" OR ""="',
  '" OR 1=1 --',
  "') OR ('a'='a",
  "admin'--",
  "' OR name LIKE '%",
  "' OR name IS NOT NULL --",
  "' UNION SELECT 1 --",
  "' UNION SELECT NULL, NULL --",
  "' UNION ALL SELECT version() --",
  "' UNION SELECT @@version #",
  '1 OR 1=1',
  "1' ORDER BY 1 --",
  "' AND 1=0 UNION SELECT current_user --",
  '%',
  '_',
  '*',
  '%%',
  "%' --",
];

const SLEEPS = [
  "'; SELECT pg_sleep(5); --",
  "' || pg_sleep(5) || '",
  "' AND (SELECT 1 FROM pg_sleep(5)) IS NOT NULL --",
  "'||(SELECT pg_sleep(5))||'",
  "' AND SLEEP(5) --",
  "' OR SLEEP(5) #",
  '1 AND SLEEP(5)',
  "' AND (SELECT * FROM (SELECT SLEEP(5)) x) --",
  "'; WAITFOR DELAY '0:0:5'; --",
  "'; WAITFOR DELAY '00:00:05' --",
  "' AND BENCHMARK(50000000, SHA1('x')) --",
  "' OR BENCHMARK(50000000, MD5(1)) #",
  "'; BEGIN dbms_lock.sleep(5); END; --",
  "' || dbms_pipe.receive_message('x', 5) || '",
  "'; CALL system$wait(5); --",
  "' OR system$wait(5) --",
  "'; SELECT sleep(5); --",
  '$$; SELECT pg_sleep(5); $$',
  "$tag$'; SELECT pg_sleep(5); --$tag$",
  "'; SELECT count(*) FROM range(10000000000); --",
];

const LOOK_ALIKES = [
  '\u2018', // left single quotation mark
  '\u2019', // right single quotation mark
  '\u201c',
  '\u201d',
  '\u02bc', // modifier letter apostrophe (folds to ' in some collations)
  '\uff07', // fullwidth apostrophe
  '\uff02', // fullwidth quotation mark
  '\u2032', // prime
  '\u00b4', // acute accent
  '\u02b9',
  '\u055a',
  '\u05f3',
  '\uff3c', // fullwidth reverse solidus
  '\u2215', // division slash
  '\ufe63', // small hyphen-minus
  '\uff0d', // fullwidth hyphen-minus
  '\u037e', // Greek question mark (looks like ;)
  '\uff1b', // fullwidth semicolon
  '\u00a5', // yen sign (a backslash in Shift-JIS)
  '\u20a9', // won sign (a backslash in some Korean encodings)
  'e\u0301',
  '\u202e', // right-to-left override
  '\u200b', // zero-width space
  '\ufeff', // byte-order mark
  '\u{1F680}\u{1F469}\u200d\u{1F469}\u200d\u{1F467}',
  '\u{1D57D}\u{1D58A}\u{1D591}\u{1D591}\u{1D594}',
];

const PLACEHOLDERS = [
  ':x',
  ':v',
  ':name',
  ':ids',
  ':1',
  '::text',
  ':name::int',
  '$1',
  '$2',
  '$1::text',
  '$0',
  '?',
  '??',
  '?::int',
  '@v',
  '@name',
  '@@version',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal template look-alike is the payload
  '${v}',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal template look-alike is the payload
  '${name}',
  '{{name}}',
  '#{name}',
  '%s',
  '%(name)s',
  '{0}',
];

/**
 * Returns 200+ distinct hostile strings (no NUL; each no longer than `maxLength`), deterministic
 * for given options. Use them as bound values: every one must behave like any harmless value.
 */
export function hostileStrings(options: HostileStringsOptions = {}): string[] {
  const table = options.table ?? 'conformance';
  const known = options.knownValue ?? 'alpha';
  const maxLength = options.maxLength ?? 1000;

  const stacked = [
    `'; DROP TABLE ${table}; --`,
    `'); DROP TABLE ${table}; --`,
    `"; DROP TABLE ${table}; --`,
    `\\'; DROP TABLE ${table}; --`,
    `1; DROP TABLE ${table}`,
    `'; DELETE FROM ${table}; --`,
    `'; TRUNCATE ${table}; --`,
    `'; UPDATE ${table} SET name = 'pwned'; --`,
    `'; INSERT INTO ${table} (id, name) VALUES (999, 'pwned'); --`,
    `'; CREATE TABLE ${table}_pwned (id int); --`,
    `'/**/;/**/DROP/**/TABLE/**/${table};/**/--`,
    `' ; COMMIT; DROP TABLE ${table}; --`,
    `'; SET SESSION TRANSACTION READ WRITE; DELETE FROM ${table}; --`,
    `'; SET default_transaction_read_only = off; DELETE FROM ${table}; --`,
    `' UNION ALL SELECT id FROM ${table} --`,
    `' OR id IN (SELECT id FROM ${table}) --`,
    `\u2019; DROP TABLE ${table}; --`,
    `\uff07; DROP TABLE ${table}; --`,
  ];

  const controls: string[] = [];
  for (let code = 1; code < 32; code++) controls.push(`a${String.fromCharCode(code)}b`);
  controls.push('a\u007fb', '\r\n', '\u001b[31mred\u001b[0m', '\b\b\b');

  const long = [
    'a'.repeat(maxLength),
    "'".repeat(maxLength),
    '\\'.repeat(maxLength),
    "';--".repeat(Math.floor(maxLength / 4)),
    `${known}' OR '1'='1`.repeat(Math.floor(maxLength / (known.length + 11))),
    '\u{1F680}'.repeat(Math.floor(maxLength / 2)),
    `${' '.repeat(maxLength - known.length)}${known}`,
    ':x'.repeat(Math.floor(maxLength / 2)),
  ];

  // Each ASCII payload alone and after a real value: spliced, `alpha' OR '1'='1` would match rows.
  // Look-alikes and control characters are never appended to the real value, because collations
  // may legitimately ignore them (MySQL's *_unicode_ci ignores U+200B and controls; PAD SPACE
  // collations ignore trailing spaces; *_ci ignores case): that is comparison, not injection.
  const payloads = [...QUOTES, ...COMMENTS, ...UNIONS, ...SLEEPS, ...stacked, ...PLACEHOLDERS];
  const variants = payloads.flatMap((p) => [p, `${known}${p}`]);

  const all = [...variants, ...LOOK_ALIKES, ...controls, ...long, ` ${known}`].filter(
    (s) => s.length > 0 && s.length <= maxLength && !s.includes('\u0000') && s !== known,
  );
  return [...new Set(all)];
}
