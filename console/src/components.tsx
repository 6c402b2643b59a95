// Small shared pieces: an error note, a data table, a copy button, a secret shown once, and a
// labelled field. Every text they show is a React text node: owner-supplied text is never HTML.
import { type ReactNode, useId, useState } from 'react';
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

export function DataTable({
  caption,
  columns,
  rows,
}: {
  readonly caption: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
}) {
  return (
    <div className="table-wrap">
      <table>
        <caption>{caption}</caption>
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
    </div>
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
