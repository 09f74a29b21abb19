import { describe, expect, it } from 'vitest';
import type { MirrorRestClient, RawTopicMessage } from '../../src/hedera/mirror-rest.js';
import { confirmOnMirror, type Expected } from '../../src/publish/confirm.js';

/** A mirror node that holds the given messages and records the ranges asked for. */
function fakeMirror(messages: RawTopicMessage[]) {
  const ranges: { afterSequence?: number; beforeSequence?: number }[] = [];
  const mirror = {
    async *rawTopicMessages(_topic: string, options: { afterSequence?: number; beforeSequence?: number }) {
      ranges.push({ afterSequence: options.afterSequence, beforeSequence: options.beforeSequence });
      yield messages.filter(
        (m) =>
          m.sequenceNumber > (options.afterSequence ?? 0) && m.sequenceNumber < (options.beforeSequence ?? Infinity),
      );
    },
  } as unknown as MirrorRestClient;
  return { mirror, ranges };
}

function raw(seq: number, text: string): RawTopicMessage {
  return {
    sequenceNumber: seq,
    message: Buffer.from(text),
    consensusTimestamp: `1700000000.${String(seq).padStart(9, '0')}`,
  } as RawTopicMessage;
}

describe('confirmOnMirror', () => {
  it('sorts what the mirror node shows into confirmed, mismatched and missing', async () => {
    const { mirror, ranges } = fakeMirror([raw(3, 'a'), raw(5, 'other'), raw(6, 'x')]);
    const expected: Expected[] = [
      { key: 'a', seq: 3, message: 'a' },
      { key: 'b', seq: 5, message: 'b' },
      { key: 'c', seq: 9, message: 'c' },
    ];
    const found = await confirmOnMirror(mirror, '0.0.1', expected, { timeoutMs: 0 });
    expect(found.confirmed).toEqual([{ key: 'a', seq: 3, consensusTimestamp: '1700000000.000000003' }]);
    expect(found.mismatched.map((m) => m.key)).toEqual(['b']);
    expect(found.missing.map((m) => m.key)).toEqual(['c']);
    expect(ranges[0]).toEqual({ afterSequence: 2, beforeSequence: 10 });
  });

  it('handles a run of hundreds of thousands of signals', async () => {
    const { mirror, ranges } = fakeMirror([]);
    const expected: Expected[] = Array.from({ length: 300_000 }, (_, i) => ({
      key: `k${i}`,
      seq: i + 1,
      message: '{}',
    }));
    const found = await confirmOnMirror(mirror, '0.0.1', expected, { timeoutMs: 0 });
    expect(found.missing).toHaveLength(300_000);
    expect(ranges[0]).toEqual({ afterSequence: 0, beforeSequence: 300_001 });
  });
});
