/** Skipped registry entries and the one parse step every registry message goes through. */
import { escapeTerminal, preview } from '../core/terminal.js';
import { formatHrl } from '../core/hrl.js';

export interface SkippedEntry {
  /** What was skipped: `hcs://2/0.0.R#17` (a registry message), `hcs://2/0.0.R` (the registry), `agents.json#3`. */
  ref: string;
  reason: string;
}

/**
 * Collects skip reasons up to a cap, then only counts, so a registry of a million junk messages cannot grow the
 * report without bound. The overflow is reported as one final entry.
 */
export class SkipList {
  private readonly items: SkippedEntry[] = [];
  private overflow = 0;
  constructor(private readonly max = 10_000) {}

  /** Reasons quote registry text: whoever built them, they are stored terminal-safe. */
  add(ref: string, reason: string): void {
    const safe = escapeTerminal(reason);
    if (this.items.length < this.max)
      this.items.push({ ref: escapeTerminal(ref), reason: safe.length > 300 ? `${safe.slice(0, 297)}...` : safe });
    else this.overflow++;
  }

  get size(): number {
    return this.items.length + this.overflow;
  }

  list(): SkippedEntry[] {
    if (this.overflow === 0) return [...this.items];
    return [
      ...this.items,
      { ref: '(more)', reason: `${this.overflow} more entries were skipped; only the first ${this.max} are listed` },
    ];
  }

  /**
   * Several lists as one report in registry order (`#seq`), overflow notes last. Folding and resolution keep
   * separate lists so a flood of junk messages cannot crowd out the reasons real entries failed.
   */
  static combine(...lists: SkipList[]): SkippedEntry[] {
    const all = lists.flatMap((l) => l.list());
    const seq = (ref: string): number => {
      const i = ref.lastIndexOf('#');
      return i < 0 ? -1 : Number(ref.slice(i + 1));
    };
    const rank = (e: SkippedEntry): number => (e.ref === '(more)' ? 1 : 0);
    return all
      .map((e, i) => ({ e, i }))
      .sort((a, b) => rank(a.e) - rank(b.e) || seq(a.e.ref) - seq(b.e.ref) || a.i - b.i)
      .map(({ e }) => e);
  }
}

/** A registry message: HCS-10 registries are HCS-2 topics, so both are written `hcs://2/<topic>#<seq>`. */
export function messageRef(topicId: string, seq: number): string {
  return `${formatHrl(2, topicId)}#${seq}`;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Registry message bytes → a JSON object, or the reason it is not one. */
export function parseJsonObject(
  bytes: Uint8Array,
  maxBytes: number,
): { ok: true; doc: Record<string, unknown> } | { ok: false; reason: string } {
  if (bytes.length > maxBytes)
    return { ok: false, reason: `message is ${bytes.length} bytes; the limit is ${maxBytes}` };
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, reason: 'message is not UTF-8 text' };
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { ok: false, reason: `invalid JSON: ${preview(text)}` };
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    return { ok: false, reason: 'message is JSON but not an object' };
  return { ok: true, doc: doc as Record<string, unknown> };
}

/** The first zod issue as one line. */
export function zodReason(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const path = issue.path.map(String).join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}
