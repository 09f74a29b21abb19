/**
 * `hcs25 signals` and `hcs25 scores` (built dist/, run as child processes against an in-process mirror REST) report
 * what the reader did not know — values and fields as well as versions, ops and signal ids — and read the rest.
 */
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packBody } from '../../src/format/pack.js';
import { FakeMirror } from '../discover/fake-mirror.js';
import { fleetSignals } from '../format/fleet.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
const PUBLISHER = '0.0.1001';

let fake: FakeMirror;
let topic: string;

beforeAll(async () => {
  fake = await new FakeMirror().start();
  topic = fake.createTopic('hcs-25:0:86400');
  const [probe, math, science] = fleetSignals(1);
  const body = structuredClone(packBody([probe!, math!, science!]).body);
  body.subjects[0]!.sig[1]!.d = { ...body.subjects[0]!.sig[1]!.d, outcome: 'partial', score: 50, flavour: 'x' };
  body.subjects[0]!.sig[2]!.d = { ...body.subjects[0]!.sig[2]!.d, score: 101 }; // malformed: rejected alone
  const submit = (bytes: Buffer | string) => fake.submit(topic, bytes, { payer: PUBLISHER });
  submit(deflateSync(JSON.stringify(body)));
  submit(JSON.stringify({ ...probe!, subject: fleetSignals(2)[3]!.subject, status: 'paused' }));
  submit(JSON.stringify({ p: 'hcs-25', op: 'vote', v: 2 }));
});
afterAll(async () => {
  await fake?.stop();
});

const hcs25 = (args: string[]) => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HCS25_')));
  return run(process.execPath, [join(root, 'dist/cli/main.js'), ...args], {
    cwd: tmpdir(),
    env: { ...env, HCS25_NETWORK: 'local', HCS25_MIRROR_REST_URL: fake.url },
    timeout: 60_000,
  });
};

describe('unknowns in the CLI reports', () => {
  it('hcs25 signals counts unknown values and fields beside unknown ops, and reads the rest of a pack', async () => {
    const { stdout } = await hcs25(['signals', '--topic', topic, '--publisher', PUBLISHER, '--json']);
    const out = JSON.parse(stdout) as {
      counts: { signals: number; rejected: Record<string, number>; unknown: Record<string, number> };
      rejected: Array<{ sequenceNumber: number; index?: number; reason: string }>;
    };
    expect(out.counts.signals).toBe(2);
    expect(out.counts.unknown).toEqual({
      'field:data.flavour': 1,
      'op:vote': 1,
      'value:outcome=partial': 1,
      'value:score=50': 1,
      'value:status=paused': 1,
    });
    expect(out.rejected).toMatchObject([{ sequenceNumber: 1, index: 2, reason: 'schema' }]);

    const text = await hcs25(['signals', '--topic', topic, '--publisher', PUBLISHER]);
    expect(text.stderr).toContain('not known to this version (skipped): op:vote 1, value:status=paused 1');
    expect(text.stderr).toContain(
      'read with what this version does not know: field:data.flavour 1, value:outcome=partial 1, value:score=50 1',
    );
    // A whole read has nothing to resume: it says how to read what comes later.
    expect(text.stderr).toContain('read what arrives later with --after-seq 3');
    expect(text.stderr).not.toContain('resume with');
  });

  it('hcs25 scores shows them in its report, and scores the signal with an unknown outcome by its score', async () => {
    const { stdout } = await hcs25(['scores', '--topic', topic, '--publisher', PUBLISHER, '--json', '--no-names']);
    const report = JSON.parse(stdout) as {
      counts: { signals: number; unknown: Record<string, number> };
      subjects: Array<{ components: Record<string, unknown> }>;
    };
    expect(report.counts.signals).toBe(2);
    expect(report.counts.unknown).toMatchObject({ 'value:outcome=partial': 1, 'value:status=paused': 1 });
    expect(report.subjects).toHaveLength(1);
    // Scored by its score (the fake mirror's consensus clock makes every signal stale: before m_stale).
    expect(report.subjects[0]!.components['simple-math.score']).toMatchObject({ beforeStale: 50, samples: 1 });
    const table = await hcs25(['scores', '--topic', topic, '--publisher', PUBLISHER, '--no-names']);
    expect(table.stdout).toMatch(/Not known to this version \(skipped or ignored\): field:data\.flavour 1, /);
  });
});
