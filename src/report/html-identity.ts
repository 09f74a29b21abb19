/**
 * Who a subject is, in the HTML report: the protocol, endpoint (or HCS-10 account) and registry entry its signals
 * cite, under its name; and the live page's search form. A plain GET form: it works with no script, so the page's
 * Content-Security-Policy (one same-origin script, nothing inline) stays as it is. Every value is a registry's or a
 * request's text: escaped.
 */
import { ellipsize, printable, protocolName } from './display.js';
import { esc } from './svg.js';

/** A subject's identity as the serve store gives it (serve/store/types.ts SubjectIdentity). */
export interface IdentityView {
  protocol: string | null;
  endpoint: string | null;
  accountId: string | null;
  registry: string | null;
  entry: string | null;
  status: string;
}

/** The live page's filters, as asked (the form shows them again). */
export interface ReportFilters {
  topic?: string;
  q?: string;
  protocol?: string;
  registry?: string;
  minScore?: number;
}

/** UAID protocol values the filter offers, as users name them. */
const PROTOCOLS = ['a2a', 'mcp', 'openai', 'rest', 'hcs-10'] as const;

/** One line under a subject's name: protocol · endpoint or account · registry entry (or why it has none yet). */
export function identityLine(identity: IdentityView | undefined): string {
  // No registry cited: the UAID's badges say all that is known.
  if (!identity || identity.status === 'uncited') return '';
  const parts: string[] = [];
  if (identity.protocol) parts.push(`<span class="proto">${esc(protocolName(identity.protocol))}</span>`);
  const address = identity.endpoint ?? (identity.accountId ? `account ${identity.accountId}` : null);
  if (address) parts.push(`<code class="endpoint">${esc(ellipsize(printable(address), 80))}</code>`);
  if (identity.entry) parts.push(`<span class="entry" title="registry entry">${esc(printable(identity.entry))}</span>`);
  else if (identity.registry) {
    const why = STATUS_TEXT[identity.status] ?? identity.status;
    parts.push(`<span class="entry">registry ${esc(printable(identity.registry))}: ${esc(why)}</span>`);
  }
  return parts.length > 0 ? `<div class="ident">${parts.join(' · ')}</div>` : '';
}

const STATUS_TEXT: Record<string, string> = {
  pending: 'not read yet',
  'not-listed': 'does not list it',
  unavailable: 'could not be read, retrying',
};

/** The search form: name / UAID / endpoint, protocol, registry, minimum score; submitted to the page itself. */
export function filterForm(filters: ReportFilters): string {
  const value = (v: string | number | undefined) => (v === undefined ? '' : ` value="${esc(String(v))}"`);
  const options = [
    `<option value="">any protocol</option>`,
    ...PROTOCOLS.map(
      (p) => `<option value="${p}"${filters.protocol === p ? ' selected' : ''}>${esc(protocolName(p))}</option>`,
    ),
  ];
  // A protocol asked for by URL that the list does not offer stays selected, so the form says what is shown.
  if (filters.protocol !== undefined && !(PROTOCOLS as readonly string[]).includes(filters.protocol))
    options.push(`<option value="${esc(filters.protocol)}" selected>${esc(printable(filters.protocol))}</option>`);
  return (
    '<section><form class="filter" method="get" action="/" role="search" aria-label="Filter subjects">' +
    (filters.topic !== undefined ? `<input type="hidden" name="topic"${value(filters.topic)}>` : '') +
    `<label>Name, UAID or endpoint <input type="search" name="q" maxlength="200"${value(filters.q)}></label>` +
    `<label>Protocol <select name="protocol">${options.join('')}</select></label>` +
    `<label>Registry <input name="registry" placeholder="0.0.1234" pattern="\\d+\\.\\d+\\.\\d+" maxlength="40"${value(filters.registry)}></label>` +
    `<label>Minimum score <input type="number" name="minScore" min="0" max="100" step="any"${value(filters.minScore)}></label>` +
    '<button type="submit">Filter</button>' +
    (active(filters)
      ? ` <a href="/${filters.topic !== undefined ? `?topic=${esc(encodeURIComponent(filters.topic))}` : ''}">clear</a>`
      : '') +
    '</form></section>'
  );
}

/** Whether any filter narrows the list. */
export function active(filters: ReportFilters): boolean {
  return (
    filters.q !== undefined ||
    filters.protocol !== undefined ||
    filters.registry !== undefined ||
    filters.minScore !== undefined
  );
}

export const IDENTITY_STYLE = `
.ident{font-size:12px;color:var(--muted);overflow-wrap:anywhere}
.ident .proto{font-weight:600;color:var(--ink)}
form.filter{display:flex;flex-wrap:wrap;gap:8px 14px;align-items:flex-end;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:10px 14px}
form.filter label{display:flex;flex-direction:column;font-size:12px;color:var(--muted);gap:2px;min-width:0}
form.filter input,form.filter select{font:inherit;font-size:14px;padding:4px 6px;border:1px solid var(--line);border-radius:6px;max-width:100%}
form.filter input[type=search]{width:16em;max-width:100%}
form.filter input[name=minScore]{width:6em}
form.filter button{font:inherit;padding:5px 14px;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff}
`;
