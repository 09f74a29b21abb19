/**
 * Finished score answers in memory: each (topic, subject)'s response body as a Buffer, with its strong ETag and its
 * freshness, so a repeated lookup costs no query, no JSON and no hash. Bounded by bytes (the least recently asked
 * goes first), so memory stays bounded however many subjects the store holds.
 *
 * `warm` fills it from the store's scores page by page until it is full (at start, and again after it was cleared),
 * so a restart does not send every lookup to the database at once.
 *
 * Staleness: whoever sees the store change drops the changed subjects (`invalidate`, from the store's per-subject
 * change revisions), then reads the rescored ones back (`reload`), or clears everything when too many changed. An
 * answer read from the store while its subject was invalidated (or the cache cleared) is not kept: it may predate the
 * change.
 */
import { createHash } from 'node:crypto';
import { BADGE_METRICS, type Badge, type BadgeMetric, badgeFor } from '../report/badge.js';
import type { ServeStore, StoredScore, SubjectKey } from './store/types.js';

export interface CachedScore {
  body: Buffer;
  etag: string;
  /** `X-Score-Fresh`: false while newer signals await rescoring. */
  fresh: boolean;
  /** The subject's badges with their default labels, worked out with the body so a badge needs no parse of it. */
  badges: Readonly<Record<BadgeMetric, Badge>>;
}

/** Indexed, but not scored yet (the route answers 503 SCORE_PENDING). Not cached. */
export const PENDING = 'pending';

/** A read from the store under way: what was invalidated since it started. */
interface Read {
  dropped: Set<string>;
  cleared: boolean;
}

interface Entry extends CachedScore {
  key: string;
  size: number;
}

function answerOf(key: string, stored: StoredScore): Entry {
  // One subject of `hcs25 scores --json`, with who the subject is added.
  const answer = stored.identity ? { ...stored.score, identity: stored.identity } : stored.score;
  const body = Buffer.from(`${JSON.stringify(answer)}\n`);
  const fresh = stored.fresh;
  // The body and its freshness name the answer: an unchanged score keeps its tag across revisions.
  const etag = `"${createHash('sha256')
    .update(body)
    .update(fresh ? '1' : '0')
    .digest('base64url')
    .slice(0, 27)}"`;
  const badges = Object.fromEntries(
    BADGE_METRICS.map((m) => [m, badgeFor(m, stored.score ?? 'pending')]),
  ) as CachedScore['badges'];
  return { key, body, etag, fresh, badges, size: body.length + key.length * 2 + OVERHEAD };
}

/** Per entry beyond the body and key: the Map slot, the entry object, the Buffer header, the ETag, the badges. */
const OVERHEAD = 360;

/** About 2 KB an answer: room for half a million subjects' answers. */
export const DEFAULT_SCORE_CACHE_BYTES = 1024 * 1024 * 1024;
/** Subjects read back per store question. */
const RELOAD_BATCH = 1000;

export class ScoreCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<CachedScore | null | typeof PENDING>>();
  private bytes = 0;
  /** The reads from the store under way, each with the keys invalidated since it started (see `keepable`). */
  private readonly reads = new Set<Read>();
  hits = 0;
  misses = 0;

  constructor(
    private readonly store: Pick<ServeStore, 'subjectScore' | 'storedScores' | 'scoresOf'>,
    /** 0 keeps nothing: every lookup asks the store. */
    readonly maxBytes = DEFAULT_SCORE_CACHE_BYTES,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get byteSize(): number {
    return this.bytes;
  }

  /** The answer for `subject` on `topic`: null when the store has no signal about it. */
  get(
    topic: string,
    subject: string,
  ): CachedScore | null | typeof PENDING | Promise<CachedScore | null | typeof PENDING> {
    const key = `${topic}\n${subject}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.hits++;
      // The map keeps insertion order: moved to the end, the entries run from least to most recently asked.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    this.misses++;
    // Concurrent misses of one subject share one query.
    let pending = this.loading.get(key);
    if (!pending) {
      const load = this.fill(key, topic, subject).finally(() => {
        if (this.loading.get(key) === load) this.loading.delete(key);
      });
      this.loading.set(key, load);
      pending = load;
    }
    return pending;
  }

  invalidate(changes: Iterable<{ topic: string; subject: string }>): void {
    for (const { topic, subject } of changes) {
      const key = `${topic}\n${subject}`;
      const entry = this.entries.get(key);
      if (entry) this.drop(key, entry);
      // A load under way may read the old answer: the next lookup starts a new one.
      this.loading.delete(key);
      for (const read of this.reads) read.dropped.add(key);
    }
  }

  /**
   * Reads these subjects' answers from the store (one question per thousand) and keeps those scored: after a change
   * was invalidated, its new scores are answered from memory too. Resolves with the number of answers kept.
   */
  async reload(keys: readonly SubjectKey[]): Promise<number> {
    if (this.maxBytes === 0) return 0;
    let kept = 0;
    for (let i = 0; i < keys.length; i += RELOAD_BATCH) {
      kept += await this.reading(
        () => this.store.scoresOf(keys.slice(i, i + RELOAD_BATCH)),
        (answers, keepable) => {
          let n = 0;
          for (const stored of answers) {
            const key = `${stored.topic}\n${stored.subject}`;
            if (keepable(key) && this.put(answerOf(key, stored))) n++;
          }
          return n;
        },
      );
    }
    return kept;
  }

  clear(): void {
    for (const read of this.reads) read.cleared = true;
    this.entries.clear();
    this.loading.clear();
    this.bytes = 0;
  }

  /**
   * Fills the cache from the store's scores, a page at a time, until it is full (it evicts nothing) or every score is
   * in. Resolves with the number of answers added.
   */
  async warm(pageSize = 1000): Promise<number> {
    let added = 0;
    let cursor: string | undefined;
    for (;;) {
      const after = cursor;
      let full = false;
      const page = await this.reading(
        () => this.store.storedScores({ limit: pageSize, ...(after !== undefined && { cursor: after }) }),
        (page, keepable) => {
          for (const stored of page.items) {
            const key = `${stored.topic}\n${stored.subject}`;
            if (this.entries.has(key) || !keepable(key)) continue;
            const entry = answerOf(key, stored);
            full = this.bytes + entry.size > this.maxBytes;
            if (full) break;
            this.entries.set(key, entry);
            this.bytes += entry.size;
            added++;
          }
          return page;
        },
      );
      if (full || page.next === null) return added;
      cursor = page.next;
    }
  }

  private async fill(key: string, topic: string, subject: string): Promise<CachedScore | null | typeof PENDING> {
    return this.reading(
      () => this.store.subjectScore(subject, { topic }),
      (stored, keepable) => {
        if (!stored) return null;
        if (!stored.score) return PENDING;
        const entry = answerOf(key, stored);
        if (keepable(key)) this.put(entry);
        return entry;
      },
    );
  }

  /**
   * Asks the store, then hands the answer to `use` with which keys may be kept: those not invalidated (nor the cache
   * cleared) while the question was out. `use` runs at once, so no change can come in between.
   */
  private async reading<T, R>(
    ask: () => Promise<T>,
    use: (value: T, keepable: (key: string) => boolean) => R,
  ): Promise<R> {
    const read: Read = { dropped: new Set(), cleared: false };
    this.reads.add(read);
    try {
      const value = await ask();
      return use(value, (key) => !read.cleared && !read.dropped.has(key));
    } finally {
      this.reads.delete(read);
    }
  }

  /** Keeps `entry` as the most recently asked, dropping the least recently asked beyond the cap; false if too large. */
  private put(entry: Entry): boolean {
    if (entry.size > this.maxBytes) return false;
    const old = this.entries.get(entry.key);
    if (old) this.drop(entry.key, old);
    this.entries.set(entry.key, entry);
    this.bytes += entry.size;
    for (const [k, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(k, e);
    }
    return true;
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytes -= entry.size;
  }
}
