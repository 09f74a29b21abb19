/**
 * Reader events → store batches. The indexer (and the bench) feed it what `readTopic` or `classify` yield, in
 * sequence order; `take()` hands over everything so far with the cursor of the last message seen. Take only between
 * messages (when the next event's sequence differs from `sequence`): a batch's cursor covers its last message whole,
 * and the store ignores whatever a later batch holds at or before it.
 */
import { eventSequence } from '../read/reader.js';
import type { TopicEvent } from '../read/types.js';
import type { IndexBatch, IndexRecord, IndexSource } from './store/types.js';

export class BatchBuilder {
  private batch = BatchBuilder.empty();
  private size = 0;
  private lastSequence = 0;
  private lastTimestamp: string | null = null;

  private static empty() {
    return {
      signals: [] as IndexBatch['signals'][number][],
      records: [] as IndexRecord[],
      unknown: [] as IndexBatch['unknown'][number][],
      rejected: [] as IndexBatch['rejected'][number][],
    };
  }

  /** Sequence number of the last event added (0 before any). */
  get sequence(): number {
    return this.lastSequence;
  }

  /** Events collected since the last take. */
  get length(): number {
    return this.size;
  }

  add(event: TopicEvent): void {
    this.size++;
    const seq = eventSequence(event);
    if (seq >= this.lastSequence) this.lastSequence = seq;
    switch (event.type) {
      case 'signal':
        this.lastTimestamp = event.signal.consensusTimestamp;
        this.batch.signals.push(event.signal);
        break;
      case 'record': {
        const r = event.record;
        this.lastTimestamp = r.consensusTimestamp;
        this.batch.records.push(r);
        break;
      }
      case 'unknown':
        this.lastTimestamp = event.unknown.consensusTimestamp;
        this.batch.unknown.push(event.unknown);
        break;
      case 'rejected':
        // An incomplete chunk group has no consensus time: the cursor keeps the last known one.
        if (event.rejected.consensusTimestamp) this.lastTimestamp = event.rejected.consensusTimestamp;
        this.batch.rejected.push(event.rejected);
        break;
    }
  }

  /** Everything added since the last take, or undefined when nothing was. */
  take(source: IndexSource): IndexBatch | undefined {
    if (this.size === 0) return undefined;
    const out: IndexBatch = {
      ...this.batch,
      cursor: { sequence: this.lastSequence, consensusTimestamp: this.lastTimestamp },
      source,
    };
    this.batch = BatchBuilder.empty();
    this.size = 0;
    return out;
  }
}
