/**
 * `hcs25 scores --publish --pack …` (the built CLI) SIGKILLed in the middle of submission, then `--resume`: every
 * subject's score record is on the score topic exactly once, as a consumer reads it (batches expanded). The emulator
 * confirms 300 ms after a submission, so at the kill some messages are sent and not yet confirmed.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitMessage } from '../../src/hedera/tx.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import { readMessage } from '../../src/format/read.js';
import { T0, evalSignal, probe, uaid } from '../support/signals.js';
import { countBy, readTopic, spawnCli, startHarness, tempDir, type Harness } from '../publish/helpers.js';

const SUBJECTS = 40;
let h: Harness;
const tmp = tempDir();
let signalTopic: string;

beforeAll(async () => {
  h = await startHarness({ consensusDelayMs: 300, mirrorLagMs: 100 });
  signalTopic = (await createSignalTopic(h.client)).topicId;
  const signals = Array.from({ length: SUBJECTS }, (_, i) => [
    probe(uaid(`agent-${i}.example.com`), { seq: 2 * i + 1, at: T0 + i * 1000, reachable: i % 3 !== 0 }),
    evalSignal(uaid(`agent-${i}.example.com`), 'math', i % 2 ? 'correct' : 'wrong', {
      seq: 2 * i + 2,
      at: T0 + i * 1000 + 500,
    }),
  ]).flat();
  await Promise.all(signals.map((s) => submitMessage(h.client, signalTopic, JSON.stringify(s.message), undefined)));
  await readTopic(h.mirror, signalTopic, signals.length);
});

afterAll(async () => {
  await h.close();
  tmp.cleanup();
});

function journalLines(stateDir: string): Array<{ t: string }> {
  const dir = join(stateDir, 'runs');
  const file = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith('.jsonl')) : undefined;
  if (!file) return [];
  return readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .filter((l) => l.endsWith('}'))
    .map((l) => JSON.parse(l) as { t: string });
}

describe('hcs25 scores --publish --pack: SIGKILL and --resume', () => {
  it.each(['subject', 'dense'] as const)(
    '--pack %s: killed with messages in flight, resumed: every record on the topic exactly once',
    async (pack) => {
      const stateDir = join(tmp.dir, `state-${pack}`);
      const scoreTopic = (await createSignalTopic(h.client)).topicId;
      const args = [
        'scores',
        '--topic',
        signalTopic,
        '--publisher',
        '0.0.2',
        '--no-names',
        '--publish',
        '--score-topic',
        scoreTopic,
      ];
      const env = { HCS25_STATE_DIR: stateDir };
      const first = spawnCli(h, tmp.dir, [...args, '--pack', pack], env);
      let killed = false;
      for (;;) {
        const lines = journalLines(stateDir);
        if (lines.some((l) => l.t === 'tx') && !lines.some((l) => l.t === 'end')) {
          first.child.kill('SIGKILL');
          killed = true;
          break;
        }
        if (first.child.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 2));
      }
      const ended = await first.done;
      expect(killed, `the publication ended before it could be killed: ${ended.stderr}`).toBe(true);
      expect(ended.signal).toBe('SIGKILL');
      const journaled = journalLines(stateDir);
      expect(journaled.filter((l) => l.t === 'receipt').length).toBeLessThan(
        journaled.filter((l) => l.t === 'scores').length,
      );

      const publication = readdirSync(join(stateDir, 'runs'))
        .find((f) => f.endsWith('.jsonl'))!
        .replace(/\.jsonl$/, '');
      const resumed = await spawnCli(h, tmp.dir, [...args, '--resume', publication], env).done;
      expect(resumed.code, resumed.stderr).toBe(0);
      const messages = journaled.filter((l) => l.t === 'scores').length;
      expect(resumed.stderr).toContain(`published ${SUBJECTS} score record(s) in ${messages} message(s)`);

      const onTopic = await readTopic(h.mirror, scoreTopic, messages);
      expect(onTopic).toHaveLength(messages);
      const subjects = onTopic.flatMap((m) => {
        const read = readMessage(m.message);
        if (!read.ok) throw new Error(read.detail);
        return read.items.map((item) =>
          item.kind === 'score' ? String(item.message.subject) : `not a score: ${item.kind}`,
        );
      });
      const counts = countBy(subjects, (s) => s);
      expect(counts.size).toBe(SUBJECTS);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
    },
  );
});
