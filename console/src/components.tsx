// Small shared pieces: an error note, a data table, a copy button, a code block, a secret shown
// once, a labelled field, owner markdown, and number and plural formats. Every text they show is
// a React text node or an element built from parsed markdown: owner-supplied text is never HTML.
import MarkdownToJsx from 'markdown-to-jsx';
import { type ReactNode, useCallback, useEffect, useId, useLayoutEffect, useRef, useState } from 'react';
import { messageOf } from './api.js';

export function ErrorNote({ error }: { readonly error: unknown }) {
  if (error === undefined || error === null) return null;
  return (
    <p className="error" role="alert">
      {messageOf(error)}
    </p>
  );
}

export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** Whether an element is wider than its box (and so scrolls sideways), kept up to date. */
function useOverflows<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  const [overflows, setOverflows] = useState(false);
  // A pixel's rounding is not overflow.
  const check = useCallback(() => {
    const element = ref.current;
    if (element !== null) setOverflows(element.scrollWidth > element.clientWidth + 1);
  }, []);
  // After every render: new rows or wider cells change what overflows without resizing the box,
  // which a ResizeObserver would not report.
  useLayoutEffect(check);
  useEffect(() => {
    const element = ref.current;
    if (element === null) return;
    const observer = new ResizeObserver(check);
    observer.observe(element);
    const table = element.firstElementChild;
    if (table !== null) observer.observe(table);
    return () => observer.disconnect();
  }, [check]);
  return [ref, overflows] as const;
}

/**
 * A box whose content (a table) scrolls sideways inside it on a narrow screen, never the page: the
 * box can then be scrolled with the keyboard, and a hint says there is more to the side.
 */
export function ScrollBox({ label, children }: { readonly label: string; readonly children: ReactNode }) {
  const [ref, overflows] = useOverflows<HTMLDivElement>();
  return (
    <>
      {overflows ? (
        <p className="hint scroll-hint" aria-hidden="true">
          Scroll sideways for more columns →
        </p>
      ) : null}
      <div
        className="table-wrap"
        ref={ref}
        // A box that scrolls must take focus, so a keyboard can scroll it too.
        {...(overflows ? { tabIndex: 0, role: 'region', 'aria-label': `${label} (scrolls sideways)` } : {})}
      >
        {children}
      </div>
    </>
  );
}

/** A table of texts, in a ScrollBox. */
export function DataTable({
  caption,
  columns,
  rows,
  hideCaption = false,
}: {
  readonly caption: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  /** The caption is for screen readers only (a heading above already says it). */
  readonly hideCaption?: boolean;
}) {
  return (
    <ScrollBox label={caption}>
      <table>
        <caption className={hideCaption ? 'visually-hidden' : undefined}>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity of their own.
            <tr key={i}>
              {row.map((cell, j) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: cells are positional.
                <td key={j}>{cellText(cell)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}

export function CopyButton({ text, label = 'Copy' }: { readonly text: string; readonly label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="secondary"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setCopied(true);
        } catch {
          setCopied(false);
        }
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}

/** Code to copy: a block with a copy button. */
export function CodeBlock({ code, label }: { readonly code: string; readonly label: string }) {
  return (
    <div className="code-block">
      {/* Focusable: a long line scrolls the block sideways, and a keyboard must reach it too. */}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region needs focus (WCAG 2.1.1). */}
      <pre tabIndex={0}>
        <code>{code}</code>
      </pre>
      <CopyButton text={code} label={`Copy ${label}`} />
    </div>
  );
}

/** A secret the gateway shows once: in a read-only field, with a copy button. */
export function SecretOnce({ label, secret }: { readonly label: string; readonly secret: string }) {
  const id = useId();
  return (
    <div className="secret" role="status">
      <label htmlFor={id}>{label}</label>
      <div className="row">
        <input
          id={id}
          readOnly
          value={secret}
          data-testid="secret"
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyButton text={secret} />
      </div>
      <p className="hint">Shown this once: store it now. It cannot be shown again.</p>
    </div>
  );
}

export function Field({
  label,
  hint,
  children,
}: {
  readonly label: string;
  readonly hint?: string;
  readonly children: (id: string, hintId: string | undefined) => ReactNode;
}) {
  const id = useId();
  const hintId = hint === undefined ? undefined : `${id}-hint`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id, hintId)}
      {hint === undefined ? null : (
        <p className="hint" id={hintId}>
          {hint}
        </p>
      )}
    </div>
  );
}

/** Formats whole cents as text. */
export const formatCents = (cents: number) => `$${(cents / 100).toFixed(2)}`;

/**
 * Formats USD (the API's `*_usd` numbers, exact to the µUSD) with at least two decimals and as
 * many more as it has, up to six: $0.50, $0.196, $0.0995, $0.000001.
 */
export function formatUsd(usd: number): string {
  const sign = usd < 0 ? '-' : '';
  const text = Math.abs(usd).toFixed(6).replace(/0+$/, '');
  const [whole = '0', decimals = ''] = text.split('.');
  return `${sign}$${whole}.${decimals.padEnd(2, '0')}`;
}

/** Formats credits (thousandths of a credit at most: the API counts millicredits). */
export const formatCredits = (credits: number) =>
  credits.toLocaleString('en-US', { maximumFractionDigits: 3 });

/** A count with thousands separators: 12,345. */
export const formatCount = (n: number) => n.toLocaleString('en-US');

/** `1 credit`, `2 credits`, `12,345 calls`. */
export const plural = (n: number, one: string, many = `${one}s`) =>
  `${formatCount(n)} ${n === 1 ? one : many}`;

/** Only web and mail links survive in owner markdown (the renderer already drops `javascript:`). */
const SAFE_LINK = /^(https?:|mailto:)/i;

/**
 * Markdown an owner wrote (a listing's description), as elements: raw HTML is not parsed (it shows
 * as text), links open outside with no referrer and no credit, images become links (an owner's
 * image would load from anywhere, on every visit).
 */
export function Markdown({ text, inline = false }: { readonly text: string; readonly inline?: boolean }) {
  return (
    <MarkdownToJsx
      options={{
        disableParsingRawHTML: true,
        forceInline: inline,
        forceBlock: !inline,
        wrapper: inline ? 'span' : 'div',
        overrides: {
          a: {
            component: ({ href, children }: { href?: string; children?: ReactNode }) =>
              href !== undefined && SAFE_LINK.test(href) ? (
                <a href={href} rel="noopener noreferrer nofollow ugc" target="_blank">
                  {children}
                </a>
              ) : (
                <span>{children}</span>
              ),
          },
          img: {
            component: ({ src, alt }: { src?: string; alt?: string }) =>
              src !== undefined && SAFE_LINK.test(src) ? (
                <a href={src} rel="noopener noreferrer nofollow ugc" target="_blank">
                  {alt || 'image'}
                </a>
              ) : (
                <span>{alt}</span>
              ),
          },
          // Owner headings sit under the page's own: never above an h3.
          h1: { component: 'h3' },
          h2: { component: 'h3' },
        },
      }}
    >
      {text}
    </MarkdownToJsx>
  );
}
