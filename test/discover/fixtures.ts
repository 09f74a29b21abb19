import type { TopicMessage } from '../../src/hedera/mirror-rest.js';

/** A whole topic message as the mirror client yields it. */
export function msg(seq: number, body: unknown, extra: Partial<TopicMessage> = {}): TopicMessage {
  const message = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return {
    sequenceNumber: seq,
    firstSequenceNumber: seq,
    consensusTimestamp: `${1_700_000_000 + seq}.000000000`,
    payerAccountId: '0.0.2',
    message,
    runningHash: '',
    chunks: 1,
    ...extra,
  };
}

/** A random walk of registry messages: `pick(seq, rnd)` gives the body of message `seq` (rnd in [0, 1)). */
export function randomMessages(
  n: number,
  seed: number,
  pick: (seq: number, rnd: () => number) => unknown,
): TopicMessage[] {
  let s = seed >>> 0;
  const rnd = () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
  return Array.from({ length: n }, (_, i) => msg(i + 1, pick(i + 1, rnd)));
}

/**
 * Folds `messages` one at a time with change tracking on, keeping a copy of the live entries from `takeChanged` and
 * `entryOf` alone (what `hcs25 watch` does), and checks that copy equals `entries()` after every message.
 */
export function checkTrackedChanges<E extends { uid: number }>(
  folder: {
    trackChanges(): void;
    takeChanged(): number[];
    entryOf(uid: number): E | undefined;
    entries(): E[];
    add(m: TopicMessage): void;
  },
  messages: TopicMessage[],
): number {
  folder.trackChanges();
  const copy = new Map<number, E>();
  let changed = 0;
  for (const m of messages) {
    folder.add(m);
    for (const uid of folder.takeChanged()) {
      changed++;
      const entry = folder.entryOf(uid);
      if (entry) copy.set(uid, entry);
      else copy.delete(uid);
    }
    const want = folder.entries();
    const got = [...copy.values()].sort((a, b) => a.uid - b.uid);
    if (JSON.stringify(got) !== JSON.stringify(want))
      throw new Error(`after #${m.sequenceNumber}: tracked ${JSON.stringify(got)} ≠ entries ${JSON.stringify(want)}`);
  }
  return changed;
}
