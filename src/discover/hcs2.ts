/**
 * HCS-2 registry folding. Indexed registries: `register / update / delete` applied in sequence order, an entry's uid
 * being its register's sequence number. Non-indexed: only the latest register counts. `migrate` ends the topic.
 *
 * The standards-sdk's HCS-2 zod schemas (zod 3, `registerMessageSchema` etc.) are mirrored here in zod 4 rather than
 * imported, for two reasons: importing the SDK is slow, and its schemas do not fit a tolerant reader —
 * `register` and `update` require `t_id` there (we accept an entry whose agent is described by `metadata` alone),
 * `metadata` must be a string (HCS-26-style writers put an inline object), and `uid` must be a string (some writers
 * send a number). `HCS2Client.getRegistry()` is not used either: it does not apply updates or deletes.
 * test/discover/hcs2.test.ts checks that every message the SDK's schemas accept is accepted here too.
 */
import { z } from 'zod';
import type { TopicMessage } from '../hedera/mirror-rest.js';
import { entityIdSchema } from '../core/id-schemas.js';
import { type SkipList, messageRef, parseJsonObject, zodReason } from './skips.js';

export interface Hcs2Memo {
  indexed: boolean;
  ttl: number;
}

/** `hcs-2:{0|1}:{ttl}`; null when the memo is not an HCS-2 registry memo. */
export function parseHcs2Memo(memo: string): Hcs2Memo | null {
  const m = /^hcs-2:([01]):(\d{1,12})$/.exec(memo.trim());
  if (!m) return null;
  return { indexed: m[1] === '0', ttl: Number(m[2]) };
}

const topicId = entityIdSchema;
/** A uid is a register's sequence number; the spec writes it as a string. */
export const uidSchema = z
  .union([z.string().regex(/^\d{1,15}$/, 'must be a sequence number'), z.number().int().positive()])
  .transform(Number);
export const metadataSchema = z.union([z.string().min(1), z.record(z.string(), z.unknown())]);
const memoField = z.string().max(500, 'memo (m) is limited to 500 characters').optional();

const registerSchema = z
  .object({
    op: z.literal('register'),
    t_id: topicId.optional(),
    metadata: metadataSchema.optional(),
    m: memoField,
    ttl: z.number().optional(),
  })
  .refine((v) => v.t_id !== undefined || v.metadata !== undefined, 'register needs t_id or metadata');
const updateSchema = z
  .object({
    op: z.literal('update'),
    uid: uidSchema,
    t_id: topicId.optional(),
    metadata: metadataSchema.optional(),
    m: memoField,
  })
  .refine((v) => v.t_id !== undefined || v.metadata !== undefined, 'update needs t_id or metadata');
const deleteSchema = z.object({ op: z.literal('delete'), uid: uidSchema, m: memoField });
const migrateSchema = z.object({
  op: z.literal('migrate'),
  t_id: topicId,
  metadata: metadataSchema.optional(),
  m: memoField,
});
const SCHEMAS = {
  register: registerSchema,
  update: updateSchema,
  delete: deleteSchema,
  migrate: migrateSchema,
} as const;

export type Metadata = z.infer<typeof metadataSchema>;

/** A live entry of an HCS-2 registry. */
export interface Hcs2Entry {
  /** Sequence number of the register message (the entry's uid). */
  uid: number;
  /** Sequence number of the last message that changed the entry (register or update). */
  seq: number;
  tId?: string;
  /** null: given up by `release` (the caller keeps what it built from it); an update's metadata sets it again. */
  metadata?: Metadata | null;
}

export interface FoldLimits {
  /** Largest registry message accepted, bytes (20 chunks of 1024 is the most HCS can carry). */
  maxMessageBytes: number;
  /** Largest inline `metadata` accepted, bytes. */
  maxMetadataBytes: number;
}

export const DEFAULT_FOLD_LIMITS: FoldLimits = { maxMessageBytes: 20 * 1024, maxMetadataBytes: 8 * 1024 };

/** Metadata that is the document itself (an object, or JSON text), not a reference to fetch (as resolveDocument reads it). */
export function isInlineMetadata(metadata: Metadata): boolean {
  return typeof metadata !== 'string' || metadata.trimStart().startsWith('{');
}

export function metadataBytes(metadata: Metadata): number {
  return typeof metadata === 'string' ? Buffer.byteLength(metadata) : Buffer.byteLength(JSON.stringify(metadata));
}

/**
 * What both registry folders share: one message at a time, nothing accepted after the first `migrate` (which sets
 * `migrateTo`), every rejected message reported. Subclasses apply the decoded operations.
 */
export abstract class RegistryFolder<S extends Record<string, z.ZodType>> {
  migrateTo: string | undefined;
  private migrateSeq = 0;
  messages = 0;

  constructor(
    protected readonly topicId: string,
    protected readonly skips: SkipList,
    private readonly protocol: string,
    private readonly schemas: S,
    private readonly limits: FoldLimits,
  ) {}

  /** uids whose entry changed since the last `takeChanged`; tracked only after `trackChanges` (a one-off fold needs none). */
  protected changed: Set<number> | undefined;

  /** From now on, note every uid whose live entry changes (registered, updated, deleted, superseded). */
  trackChanges(): void {
    this.changed ??= new Set();
  }

  /** The uids changed since the last call, ascending: a follower re-reads only these, not every entry. */
  takeChanged(): number[] {
    if (!this.changed || this.changed.size === 0) return [];
    const out = [...this.changed].sort((a, b) => a - b);
    this.changed.clear();
    return out;
  }

  add(msg: TopicMessage): void {
    this.messages++;
    const skip = (reason: string): void => this.skips.add(messageRef(this.topicId, msg.sequenceNumber), reason);
    if (this.migrateTo !== undefined) {
      skip(`after the migrate at #${this.migrateSeq}; the registry moved to ${this.migrateTo}`);
      return;
    }
    const decoded = decodeOp(msg.message, this.protocol, this.schemas, this.limits);
    if (!decoded.ok) {
      skip(decoded.reason);
      return;
    }
    const head = decoded.op as { op: string; t_id?: string };
    if (head.op === 'migrate') {
      this.migrateTo = head.t_id;
      this.migrateSeq = msg.sequenceNumber;
      return;
    }
    this.apply(decoded.op as FoldOp<S>, msg, skip);
  }

  protected abstract apply(op: FoldOp<S>, msg: TopicMessage, skip: (reason: string) => void): void;
}

/** Any decoded operation but `migrate`, which the base class handles. */
export type FoldOp<S extends Record<string, z.ZodType>> = Exclude<z.infer<S[keyof S]>, { op: 'migrate' }>;

/**
 * Folds one HCS-2 registry topic message by message (memory grows only with live entries). Feed messages in
 * ascending sequence order with `add`, then read `entries()`. `migrateTo` is set by the first `migrate`.
 */
export class Hcs2Folder extends RegistryFolder<typeof SCHEMAS> {
  private readonly live = new Map<number, Hcs2Entry>();
  /** First-chunk sequence number → uid, so an update may name either end of a chunked register. */
  private readonly alias = new Map<number, number>();
  private latest: Hcs2Entry | undefined;

  constructor(
    topicId: string,
    private readonly indexed: boolean,
    skips: SkipList,
    limits: FoldLimits = DEFAULT_FOLD_LIMITS,
  ) {
    super(topicId, skips, 'hcs-2', SCHEMAS, limits);
  }

  protected apply(op: FoldOp<typeof SCHEMAS>, msg: TopicMessage, skip: (reason: string) => void): void {
    switch (op.op) {
      case 'register': {
        const entry: Hcs2Entry = {
          uid: msg.sequenceNumber,
          seq: msg.sequenceNumber,
          ...(op.t_id !== undefined && { tId: op.t_id }),
          ...(op.metadata !== undefined && { metadata: op.metadata }),
        };
        this.changed?.add(entry.uid);
        if (!this.indexed) {
          if (this.latest) this.changed?.add(this.latest.uid);
          this.latest = entry;
          return;
        }
        this.live.set(entry.uid, entry);
        if (msg.firstSequenceNumber !== msg.sequenceNumber) this.alias.set(msg.firstSequenceNumber, entry.uid);
        return;
      }
      case 'update':
      case 'delete': {
        if (!this.indexed) {
          skip(`${op.op} is not valid in a non-indexed registry`);
          return;
        }
        const uid = this.alias.get(op.uid) ?? op.uid;
        const entry = this.live.get(uid);
        if (entry === undefined) {
          skip(`${op.op} of uid ${op.uid}, which is not a live entry`);
          return;
        }
        this.changed?.add(uid);
        if (op.op === 'delete') {
          this.live.delete(uid);
          return;
        }
        if (op.t_id !== undefined) entry.tId = op.t_id;
        if (op.metadata !== undefined) entry.metadata = op.metadata;
        entry.seq = msg.sequenceNumber;
        return;
      }
    }
  }

  /** The live entry of `uid`, as `entries()` lists it; undefined once deleted (non-indexed: replaced). */
  entryOf(uid: number): Hcs2Entry | undefined {
    if (!this.indexed) return this.latest?.uid === uid ? this.latest : undefined;
    return this.live.get(uid);
  }

  /**
   * The caller keeps what it built from `uid`'s metadata (a follower keeps the agent): the entry forgets the text and
   * holds `metadata: null`, so a long-running follower does not keep every registration's metadata twice. Metadata
   * wins over `t_id`, so an update bringing `t_id` alone leaves the agent as built; one bringing metadata sets it again.
   */
  release(uid: number): void {
    const entry = this.entryOf(uid);
    if (entry?.metadata !== undefined) entry.metadata = null;
  }

  /** Live entries in uid order (non-indexed: at most the latest register). */
  entries(): Hcs2Entry[] {
    if (!this.indexed) return this.latest ? [this.latest] : [];
    return [...this.live.values()].sort((a, b) => a.uid - b.uid);
  }
}

/**
 * Registry message bytes → one of `schemas`' operations for protocol `p`, with any metadata within the cap; or the
 * reason it is not one. Shared by the HCS-2 and HCS-10 folders.
 */
export function decodeOp<S extends Record<string, z.ZodType>>(
  bytes: Uint8Array,
  p: string,
  schemas: S,
  limits: FoldLimits,
): { ok: true; op: z.infer<S[keyof S]> } | { ok: false; reason: string } {
  const parsed = parseJsonObject(bytes, limits.maxMessageBytes);
  if (!parsed.ok) return parsed;
  const doc = parsed.doc;
  if (doc.p !== p) return { ok: false, reason: `wrong protocol: p is ${describeValue(doc.p)}, expected "${p}"` };
  // Own properties only: an op of "constructor" or "__proto__" must not find Object's.
  const schema = typeof doc.op === 'string' && Object.hasOwn(schemas, doc.op) ? schemas[doc.op as keyof S] : undefined;
  if (schema === undefined) return { ok: false, reason: `unknown op ${describeValue(doc.op)}` };
  if (
    doc.metadata !== undefined &&
    doc.metadata !== null &&
    (typeof doc.metadata === 'string' || typeof doc.metadata === 'object')
  ) {
    const size = metadataBytes(doc.metadata as Metadata);
    if (size > limits.maxMetadataBytes)
      return { ok: false, reason: `metadata is ${size} bytes; the limit is ${limits.maxMetadataBytes}` };
  }
  const result = schema.safeParse(doc);
  if (!result.success) return { ok: false, reason: `invalid ${doc.op}: ${zodReason(result.error)}` };
  return { ok: true, op: result.data as z.infer<S[keyof S]> };
}

export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  const s = JSON.stringify(value) ?? String(value);
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}
