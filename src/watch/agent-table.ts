/**
 * The agents a watcher knows, kept off the JavaScript heap: each agent is one compact record in byte chunks, found
 * through a subject-hash index in typed arrays, and an `Agent` object is made only when one is asked for.
 *
 * Why: a watcher follows a registry for days and holds every agent. As objects, an agent cost ~500 B of live heap
 * (its UAID string alone ~160 B, the object ~100, the map entries that key it) and V8 keeps its old space well above
 * what is live, so each agent counted about twice in RSS; here it is a record of ~180 B (bench agents) plus ~40 B of
 * index and per-row columns, outside the heap and no object per agent.
 *
 * Rows: an agent keeps its row while it lives (an update rewrites its record, not its row), so a schedule may hold
 * rows instead of subject strings; a deleted agent's row is reused, with a new generation (`generation(row)`), so a
 * holder of an old row can tell. Each row has a byte of flags for its holder (the watcher marks agents asked in the
 * cycle) and the registry sequence of the message that last changed the agent.
 */
import { PROTOCOLS, type Agent } from '../core/agent.js';

/** Record flags: which optional fields follow. */
const HAS_ENDPOINT = 1;
const HAS_INBOUND = 2;
const HAS_ACCOUNT = 4;
const HAS_MODEL = 8;
const HAS_SOURCE = 16;
/** `source` is the table's own (one string for all agents of a registry). */
const TABLE_SOURCE = 32;
const HAS_SEQ = 64;

/** Records are written into chunks of this size (a larger record gets a chunk of its own). */
const CHUNK_BYTES = 256 * 1024;
const EMPTY = 0;

export class AgentTable {
  private chunks: (Buffer | null)[] = [];
  /** Bytes written into each chunk, and of those, bytes of records since replaced or deleted. */
  private chunkUsed: number[] = [];
  private chunkDead: number[] = [];
  private freeChunks: number[] = [];
  /** The chunk new records go to. */
  private tail = -1;

  // Per row.
  private chunkOf = new Int32Array(0);
  private offsetOf = new Int32Array(0);
  private lengthOf = new Int32Array(0);
  private hashOf = new Int32Array(0);
  private generations = new Uint32Array(0);
  private changedSeqs = new Float64Array(0);
  private flagBits = new Uint8Array(0);
  /** Rows ever used (the high-water mark); rows below it are live unless listed free. */
  private rows = 0;
  private freeRows: number[] = [];
  private live = new Uint8Array(0);
  private count = 0;

  /** Open addressing, linear probing: row + 1, or EMPTY. */
  private index = new Int32Array(16);
  private scratch = Buffer.allocUnsafeSlow(512);

  /**
   * `source`: the `source` most agents carry (stored once, not per record). `chunkBytes`: the size of the chunks
   * records are written in (tests make it small to move records often).
   */
  constructor(
    private readonly source?: string,
    private readonly chunkBytes = CHUNK_BYTES,
  ) {}

  get size(): number {
    return this.count;
  }

  has(subject: string): boolean {
    return this.rowOf(subject) >= 0;
  }

  get(subject: string): Agent | undefined {
    const row = this.rowOf(subject);
    return row < 0 ? undefined : this.decode(row);
  }

  /** The agent at `row`, or undefined when the row is free. */
  at(row: number): Agent | undefined {
    return this.isLive(row) ? this.decode(row) : undefined;
  }

  subjectAt(row: number): string | undefined {
    if (!this.isLive(row)) return undefined;
    const { buf, pos } = this.locate(row);
    const [len, start] = readVarint(buf, pos + 2);
    return buf.toString('utf8', start, start + len);
  }

  generation(row: number): number {
    return this.generations[row] ?? 0;
  }

  /** The registry sequence of the message that last changed `subject`'s agent. */
  changedSeq(subject: string): number | undefined {
    const row = this.rowOf(subject);
    if (row < 0) return undefined;
    const seq = this.changedSeqs[row]!;
    return Number.isNaN(seq) ? undefined : seq;
  }

  /** The row of `subject`, or -1. */
  rowOf(subject: string): number {
    const hash = hashOf(subject);
    const mask = this.index.length - 1;
    let encoded = -1;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const slot = this.index[i]!;
      if (slot === EMPTY) return -1;
      const row = slot - 1;
      if (this.hashOf[row] !== hash) continue;
      if (encoded < 0) encoded = this.encodeKey(subject);
      const { buf, pos } = this.locate(row);
      const [len, start] = readVarint(buf, pos + 2);
      if (len === encoded && buf.compare(this.scratch, 0, encoded, start, start + len) === 0) return row;
    }
  }

  /** Adds or replaces `agent` (keyed by its subject); returns its row. `changedSeq`: the message that changed it. */
  set(agent: Agent, changedSeq?: number): number {
    let row = this.rowOf(agent.subject);
    const fresh = row < 0;
    if (fresh) row = this.newRow();
    else this.forget(row);
    const record = this.encode(agent);
    const chunk = this.room(record.length);
    const buf = this.chunks[chunk]!;
    const pos = this.chunkUsed[chunk]!;
    record.copy(buf, pos);
    this.chunkUsed[chunk] = pos + record.length;
    this.chunkOf[row] = chunk;
    this.offsetOf[row] = pos;
    this.lengthOf[row] = record.length;
    this.changedSeqs[row] = changedSeq ?? Number.NaN;
    if (fresh) {
      this.hashOf[row] = hashOf(agent.subject);
      this.flagBits[row] = 0;
      this.live[row] = 1;
      this.count++;
      if (this.count * 2 > this.index.length) this.rehash(this.index.length * 2);
      else this.insert(row);
    }
    return row;
  }

  delete(subject: string): boolean {
    const row = this.rowOf(subject);
    if (row < 0) return false;
    this.unindex(row);
    this.forget(row);
    this.live[row] = 0;
    this.generations[row] = (this.generations[row]! + 1) >>> 0;
    this.flagBits[row] = 0;
    this.freeRows.push(row);
    this.count--;
    return true;
  }

  hasFlag(subject: string, bit: number): boolean {
    const row = this.rowOf(subject);
    return row >= 0 && (this.flagBits[row]! & bit) !== 0;
  }

  /** Sets or clears `bit` for `subject` (nothing when it is not known). */
  setFlag(subject: string, bit: number, on: boolean): void {
    const row = this.rowOf(subject);
    if (row >= 0) this.flagBits[row] = on ? this.flagBits[row]! | bit : this.flagBits[row]! & ~bit;
  }

  /** Clears `bit` on every row. */
  clearFlag(bit: number): void {
    for (let row = 0; row < this.rows; row++) this.flagBits[row] = this.flagBits[row]! & ~bit;
  }

  /** Live rows, in row order. */
  *liveRows(): IterableIterator<number> {
    for (let row = 0; row < this.rows; row++) if (this.live[row] === 1) yield row;
  }

  *keys(): IterableIterator<string> {
    for (const row of this.liveRows()) yield this.subjectAt(row)!;
  }

  *values(): IterableIterator<Agent> {
    for (const row of this.liveRows()) yield this.decode(row);
  }

  /** Bytes held outside the heap: the chunks, the per-row columns and the index. */
  get bytes(): number {
    let n = this.index.byteLength;
    for (const c of this.chunks) n += c?.length ?? 0;
    for (const col of [this.chunkOf, this.offsetOf, this.lengthOf, this.hashOf, this.generations, this.changedSeqs, this.flagBits, this.live]) n += col.byteLength;
    return n;
  }

  private isLive(row: number): boolean {
    return row >= 0 && row < this.rows && this.live[row] === 1;
  }

  private locate(row: number): { buf: Buffer; pos: number } {
    return { buf: this.chunks[this.chunkOf[row]!]!, pos: this.offsetOf[row]! };
  }

  private newRow(): number {
    const reused = this.freeRows.pop();
    if (reused !== undefined) return reused;
    if (this.rows === this.chunkOf.length) this.growRows(Math.max(64, this.rows * 2));
    return this.rows++;
  }

  private growRows(capacity: number): void {
    const grow = <T extends Int32Array | Uint32Array | Float64Array | Uint8Array>(old: T, make: (n: number) => T): T => {
      const next = make(capacity);
      next.set(old);
      return next;
    };
    this.chunkOf = grow(this.chunkOf, (n) => new Int32Array(n));
    this.offsetOf = grow(this.offsetOf, (n) => new Int32Array(n));
    this.lengthOf = grow(this.lengthOf, (n) => new Int32Array(n));
    this.hashOf = grow(this.hashOf, (n) => new Int32Array(n));
    this.generations = grow(this.generations, (n) => new Uint32Array(n));
    this.changedSeqs = grow(this.changedSeqs, (n) => new Float64Array(n));
    this.flagBits = grow(this.flagBits, (n) => new Uint8Array(n));
    this.live = grow(this.live, (n) => new Uint8Array(n));
  }

  /**
   * The row's record is no longer used (the row is being rewritten or freed: it has no record until then): its chunk
   * counts the bytes dead, and is emptied when half of it is.
   */
  private forget(row: number): void {
    const chunk = this.chunkOf[row]!;
    this.chunkOf[row] = -1;
    this.chunkDead[chunk]! += this.lengthOf[row]!;
    if (chunk !== this.tail && this.chunkDead[chunk]! * 2 >= this.chunkUsed[chunk]!) this.evacuate(chunk);
  }

  /** Moves the live records of `chunk` to the tail and frees the chunk. */
  private evacuate(chunk: number): void {
    const from = this.chunks[chunk]!;
    this.chunks[chunk] = null;
    for (let row = 0; row < this.rows; row++) {
      if (this.live[row] !== 1 || this.chunkOf[row] !== chunk) continue;
      const len = this.lengthOf[row]!;
      const to = this.room(len);
      const pos = this.chunkUsed[to]!;
      from.copy(this.chunks[to]!, pos, this.offsetOf[row]!, this.offsetOf[row]! + len);
      this.chunkUsed[to] = pos + len;
      this.chunkOf[row] = to;
      this.offsetOf[row] = pos;
    }
    this.chunkUsed[chunk] = 0;
    this.chunkDead[chunk] = 0;
    this.freeChunks.push(chunk);
  }

  /** A chunk with `bytes` free at its end (the tail, or a new tail). */
  private room(bytes: number): number {
    for (;;) {
      if (this.tail >= 0 && this.chunkUsed[this.tail]! + bytes <= this.chunks[this.tail]!.length) return this.tail;
      const old = this.tail;
      const chunk = this.freeChunks.pop() ?? this.chunks.length;
      this.chunks[chunk] = Buffer.allocUnsafeSlow(Math.max(this.chunkBytes, bytes));
      this.chunkUsed[chunk] = 0;
      this.chunkDead[chunk] = 0;
      this.tail = chunk;
      // The old tail may be mostly dead already: it is evacuated once another chunk takes new records. Its records
      // may fill the new tail, so whether `bytes` still fits is asked again.
      if (old >= 0 && this.chunkDead[old]! * 2 >= this.chunkUsed[old]!) this.evacuate(old);
    }
  }

  private insert(row: number): void {
    const mask = this.index.length - 1;
    let i = this.hashOf[row]! & mask;
    while (this.index[i] !== EMPTY) i = (i + 1) & mask;
    this.index[i] = row + 1;
  }

  /** Removes `row` from the index, moving back the entries after it that its slot had pushed on (no tombstones). */
  private unindex(row: number): void {
    const mask = this.index.length - 1;
    let i = this.hashOf[row]! & mask;
    while (this.index[i] !== row + 1) i = (i + 1) & mask;
    let hole = i;
    for (let j = (hole + 1) & mask; this.index[j] !== EMPTY; j = (j + 1) & mask) {
      const home = this.hashOf[this.index[j]! - 1]! & mask;
      // Entry j may fill the hole when its home is not in the cyclic range (hole, j].
      if ((j > hole && (home <= hole || home > j)) || (j < hole && home <= hole && home > j)) {
        this.index[hole] = this.index[j]!;
        hole = j;
      }
    }
    this.index[hole] = EMPTY;
  }

  private rehash(capacity: number): void {
    this.index = new Int32Array(capacity);
    for (let row = 0; row < this.rows; row++) if (this.live[row] === 1) this.insert(row);
  }

  /** Writes `subject` as UTF-8 into the scratch buffer; returns its length. */
  private encodeKey(subject: string): number {
    if (this.scratch.length < subject.length * 3) this.scratch = Buffer.allocUnsafeSlow(subject.length * 3);
    return this.scratch.write(subject, 0, 'utf8');
  }

  /** flags, protocol, subject (read without decoding the rest), name, the optional strings its flags name, [registrySeq f64]. */
  private encode(a: Agent): Buffer {
    let flags = 0;
    const strings = [a.subject, a.name];
    if (a.endpoint !== undefined) (flags |= HAS_ENDPOINT), strings.push(a.endpoint);
    if (a.inboundTopicId !== undefined) (flags |= HAS_INBOUND), strings.push(a.inboundTopicId);
    if (a.accountId !== undefined) (flags |= HAS_ACCOUNT), strings.push(a.accountId);
    if (a.model !== undefined) (flags |= HAS_MODEL), strings.push(a.model);
    if (a.source !== undefined && a.source === this.source) flags |= TABLE_SOURCE;
    else if (a.source !== undefined) (flags |= HAS_SOURCE), strings.push(a.source);
    if (a.registrySeq !== undefined) flags |= HAS_SEQ;
    let size = 2 + 8;
    for (const s of strings) size += 5 + s.length * 3;
    if (this.scratch.length < size) this.scratch = Buffer.allocUnsafeSlow(size);
    const buf = this.scratch;
    buf[0] = flags;
    buf[1] = PROTOCOLS.indexOf(a.protocol);
    let pos = 2;
    for (const s of strings) {
      const len = Buffer.byteLength(s, 'utf8');
      pos = writeVarint(buf, pos, len);
      pos += buf.write(s, pos, 'utf8');
    }
    if (flags & HAS_SEQ) pos = buf.writeDoubleLE(a.registrySeq!, pos);
    return buf.subarray(0, pos);
  }

  private decode(row: number): Agent {
    const { buf, pos } = this.locate(row);
    const flags = buf[pos]!;
    let at = pos + 2;
    const next = (): string => {
      const [len, start] = readVarint(buf, at);
      at = start + len;
      return buf.toString('utf8', start, start + len);
    };
    const agent: Agent = { subject: next(), name: next(), protocol: PROTOCOLS[buf[pos + 1]!]! };
    if (flags & HAS_ENDPOINT) agent.endpoint = next();
    if (flags & HAS_INBOUND) agent.inboundTopicId = next();
    if (flags & HAS_ACCOUNT) agent.accountId = next();
    if (flags & HAS_MODEL) agent.model = next();
    if (flags & HAS_SOURCE) agent.source = next();
    else if (flags & TABLE_SOURCE) agent.source = this.source!;
    if (flags & HAS_SEQ) agent.registrySeq = buf.readDoubleLE(at);
    return agent;
  }
}

/** FNV-1a over the UTF-16 code units, then murmur3's finalizer (linear probing needs well-spread low bits). */
function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function writeVarint(buf: Buffer, pos: number, n: number): number {
  while (n >= 0x80) {
    buf[pos++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  buf[pos++] = n;
  return pos;
}

/** [value, position after it]. */
function readVarint(buf: Buffer, pos: number): [number, number] {
  let n = 0;
  let shift = 0;
  for (;;) {
    const b = buf[pos++]!;
    n |= (b & 0x7f) << shift;
    if (b < 0x80) return [n >>> 0, pos];
    shift += 7;
  }
}
