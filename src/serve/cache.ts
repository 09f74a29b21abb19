/**
 * Finished score answers in memory: each (topic, subject)'s response body as a Buffer, with its strong ETag and its
 * freshness, so a repeated lookup costs no query, no JSON and no hash. Bounded by bytes (the least recently asked
 * goes first), so memory stays bounded however many subjects the store holds.
 *
 * `warm` fills it from the store's scores page by page until it is full (at start, and again after it was cleared),
 * so a restart does not send every lookup to the database at once.
 *
 * Staleness: whoever sees the store change drops the changed subjects (`invalidate`, from the store's per-subject
 * change revisions), then reads the rescored ones back (`reload`), or clears everything when too many changed. A lookup that was reading the store while an invalidation ran does not keep its answer, which may predate
 * the change.
 */
import { createHash } from 'node:crypto';
import type { ServeStore, StoredScore, SubjectKey } from './store/types.js';

export interface CachedScore {
  body: Buffer;
  etag: string;
  /** `X-Score-Fresh`: false while newer signals await rescoring. */
  fresh: boolean;
}

/** Indexed, but not scored yet (the route answers 503 SCORE_PENDING). Not cached. */
export const PENDING = 'pending';

interface Entry extends CachedScore {
  key: string;
  size: number;
}

function answerOf(key: string, stored: StoredScore): Entry {
  const body = Buffer.from(`${JSON.stringify(stored.score)}\n`);
  const fresh = stored.fresh;
  // The body and its freshness name the answer: an unchanged score keeps its tag across revisions.
  const etag = `"${createHash('sha256')
    .update(body)
    .update(fresh ? '1' : '0')
    .digest('base64url')
    .slice(0, 27)}"`;
  return { key, body, etag, fresh, size: body.length + key.length * 2 + OVERHEAD };
}

/** Per entry beyond the body and key: the Map slot, the entry object, the Buffer header, the ETag string. */
const OVERHEAD = 200;

/** About 2 KB an answer: room for half a million subjects' answers. */
export const DEFAULT_SCORE_CACHE_BYTES = 1024 * 1024 * 1024;
/** Subjects read back per store question. */
const RELOAD_BATCH = 1000;

export class ScoreCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<CachedScore | null | typeof PENDING>>();
  private bytes = 0;
  /** Moves on every invalidation: a load that started before one does not store its answer. */
  private generation = 0;
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
    this.generation++;
    for (const { topic, subject } of changes) {
      const key = `${topic}\n${subject}`;
      const entry = this.entries.get(key);
      if (entry) this.drop(key, entry);
      // A load under way may read the old answer: the next lookup starts a new one.
      this.loading.delete(key);
    }
  }

  /**
   * Reads these subjects' answers from the store (one question per thousand) and keeps those scored: after a change
   * was invalidated, its new scores are answered from memory too. A batch read while an invalidation ran is not kept,
   * nor are the batches after it. Resolves with the number of answers kept.
   */
  async reload(keys: readonly SubjectKey[]): Promise<number> {
    if (this.maxBytes === 0) return 0;
    let kept = 0;
    for (let i = 0; i < keys.length; i += RELOAD_BATCH) {
      const generation = this.generation;
      const answers = await this.store.scoresOf(keys.slice(i, i + RELOAD_BATCH));
      if (generation !== this.generation) return kept;
      for (const stored of answers) if (this.put(answerOf(`${stored.topic}\n${stored.subject}`, stored))) kept++;
    }
    return kept;
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear();
    this.bytes = 0;
  }

  /**
   * Fills the cache from the store's scores, a page at a time, until it is full (it evicts nothing) or every score is
   * in; a page read while an invalidation ran is skipped. Resolves with the number of answers added.
   */
  async warm(pageSize = 1000): Promise<number> {
    let added = 0;
    let cursor: string | undefined;
    for (;;) {
      const generation = this.generation;
      const page = await this.store.storedScores({ limit: pageSize, ...(cursor !== undefined && { cursor }) });
      if (generation === this.generation) {
        for (const stored of page.items) {
          const key = `${stored.topic}\n${stored.subject}`;
          if (this.entries.has(key)) continue;
          const entry = answerOf(key, stored);
          if (this.bytes + entry.size > this.maxBytes) return added;
          this.entries.set(key, entry);
          this.bytes += entry.size;
          added++;
        }
      }
      if (page.next === null) return added;
      cursor = page.next;
    }
  }

  private async fill(key: string, topic: string, subject: string): Promise<CachedScore | null | typeof PENDING> {
    const generation = this.generation;
    const stored = await this.store.subjectScore(subject, { topic });
    if (!stored) return null;
    if (!stored.score) return PENDING;
    const entry = answerOf(key, stored);
    if (generation === this.generation) this.put(entry);
    return entry;
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
