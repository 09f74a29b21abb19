/**
 * The consumer end to end on the embedded emulator (ephemeral ports): signals submitted with the Hedera SDK, read back
 * from the emulator's mirror REST by the reader, scored; and the `hcs25 signals` / `hcs25 scores` commands (in-process;
 * the built CLI as a child process is tested in test/cli) including `--publish` of op "score" messages.
 */
import { formatThreeTopicMemo } from '../../src/publish/topic.js';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TopicMessageSubmitTransaction, type Client } from '@hashgraph/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectTopicSignals } from '../../src/read/reader.js';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import { computeScores } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG, parseScoringConfig, scoringConfigDigest } from '../../src/score/scoring-config.js';
import { scoreMessageV3Schema } from '../../src/format/score-v3.js';
import { startWriter, type Writer } from '../discover/emulator.js';
import { runCli } from '../support/cli.js';
import { register as registerSignals } from '../../src/cli/signals.js';
import { register as registerScores } from '../../src/cli/scores.js';
import { register as registerDiscover } from '../../src/cli/discover.js';
import { HOUR, probe, uaid, vectorConfig, vectorSignals } from '../support/signals.js';

const A2A = uaid('calc.example.com');
const MCP = uaid('files.mcp.dev', 'mcp');

let writer: Writer;
let operator: string;
let other: Client;
let otherId: string;
let topic: string;

beforeAll(async () => {
  writer = await startWriter();
  operator = writer.node.operator.accountId;
  const account = writer.node.accounts.find((a) => a.type === 'ED25519')!;
  otherId = account.accountId;
  other = writer.node.client({ accountId: account.accountId, privateKey: account.privateKey });
  // One signal topic: the test-vector subject, then an MCP subject. Submitted one by one: order is what "latest" means.
  topic = await writer.createTopic('hcs-25:0:86400');
  const start = Date.now() - HOUR;
  const signals = [
    ...vectorSignals(A2A, 1, start),
    ...Array.from({ length: 10 }, (_, i) =>
      probe(MCP, { seq: 100 + i, at: start + i * 1000, run: 50 + i, reachable: i !== 0 }),
    ),
  ];
  for (const s of signals) await writer.submit(topic, s.message);
});

afterAll(async () => {
  other?.close();
  await writer?.stop();
});

const soon = () => new Date(Date.now() + 60_000);

describe('consumer on the emulator', () => {
  it('the spec test vectors through the full path: SDK submit → mirror REST → reader → scores', async () => {
    const { signals, rejected } = await collectTopicSignals({
      topic,
      mirror: writer.mirrorRestUrl,
      publishers: [operator],
    });
    expect(rejected).toEqual([]);
    expect(signals).toHaveLength(26);
    const tv1 = computeScores(signals, parseScoringConfig(vectorConfig(1)), { now: soon() });
    expect(tv1.subjects.find((s) => s.subject === A2A)!.trustScores).toEqual({
      total: 57.5,
      availability: 90,
      'simple-evals': 50,
      reputation: 40,
    });
    const tv2 = computeScores(signals, parseScoringConfig(vectorConfig(2)), { now: soon() });
    expect(tv2.subjects.find((s) => s.subject === A2A)!.trustScores.total).toBe(63.33);
  });

  it('default config: a non-applicable adapter leaves the denominator; old signals go stale', async () => {
    const { signals } = await collectTopicSignals({ topic, mirror: writer.mirrorRestUrl, publishers: [operator] });
    const fresh = computeScores(signals, DEFAULT_SCORING_CONFIG, { now: soon() }).subjects.find(
      (s) => s.subject === MCP,
    )!;
    expect(fresh.trustScores).toEqual({ total: 90, availability: 90 });
    expect(fresh.adapters.filter((a) => !a.applicable).map((a) => a.adapterId)).toEqual([
      'simple-math',
      'simple-science',
    ]);
    const later = new Date(Date.now() + 10 * 24 * HOUR);
    const stale = computeScores(signals, DEFAULT_SCORING_CONFIG, { now: later }).subjects.find(
      (s) => s.subject === MCP,
    )!;
    expect(stale.components['availability.uptime']!.status).toBe('stale');
    // The built-in m_stale is 1 (HCS-25's default): stale, and worth what it was; a configured 0.5 halves it.
    expect(stale.trustScores.total).toBe(90);
    const halved = parseScoringConfig({ ...DEFAULT_SCORING_CONFIG, staleMultiplier: 0.5 });
    const halvedStale = computeScores(signals, halved, { now: later }).subjects.find((s) => s.subject === MCP)!;
    expect(halvedStale.trustScores.total).toBe(45);
  });

  it('a hostile topic (junk, forged publisher, oversized, later version, duplicate) produces reasons and counts only', async () => {
    const hostile = await writer.createTopic('hcs-25:0:86400');
    const good = probe(A2A, { seq: 1, at: Date.now(), run: 7 }).message;
    await writer.submit(hostile, 'definitely { not json');
    await (
      await new TopicMessageSubmitTransaction().setTopicId(hostile).setMessage(JSON.stringify(good)).execute(other)
    ).getReceipt(other);
    await writer.submit(hostile, { ...good, data: { ...good.data, reason: 'x'.repeat(2000) } }); // the SDK chunks it
    await writer.submit(hostile, { ...good, v: 3 });
    const { signals, rejected, unknown } = await collectTopicSignals({
      topic: hostile,
      mirror: writer.mirrorRestUrl,
      publishers: [operator],
    });
    expect(signals).toEqual([]);
    expect(rejected.map((r) => r.reason)).toEqual(['bad-json', 'publisher-not-allowed', 'too-large']);
    expect(unknown.version).toEqual({ '3': 1 }); // a later version is counted, not an error
    expect(rejected[1]!.payerAccountId).toBe(otherId);

    // Without the allow-list the forged one is a signal; a repeat from the same payer is a duplicate.
    await writer.submit(hostile, good);
    await writer.submit(hostile, good);
    const open = await collectTopicSignals({ topic: hostile, mirror: writer.mirrorRestUrl });
    expect(open.signals.map((s) => s.payerAccountId)).toEqual([otherId, operator]);
    expect(open.rejected.map((r) => r.reason)).toEqual(['bad-json', 'too-large', 'duplicate']);
  });

  describe('CLI', () => {
    let restoreEnv: () => void = () => undefined;
    beforeAll(() => {
      const saved = { ...process.env };
      for (const k of Object.keys(process.env)) if (k.startsWith('HCS25_')) delete process.env[k];
      Object.assign(process.env, {
        HCS25_NETWORK: 'local',
        HCS25_MIRROR_REST_URL: writer.mirrorRestUrl,
        HCS25_NODES: `127.0.0.1:${writer.node.ports.consensus}=0.0.3`,
        HCS25_MIRROR_GRPC: `127.0.0.1:${writer.node.ports.mirrorGrpc}`,
        HCS25_STATE_DIR: mkdtempSync(join(tmpdir(), 'hcs25-e2e-state-')),
      });
      restoreEnv = () => {
        process.env = saved;
      };
    });
    afterAll(() => restoreEnv());
    /** `hcs25 <args>` in-process; like a failed child process, a non-zero exit rejects with its code and output. */
    const hcs25 = async (args: string[]) => {
      const r = await runCli([registerSignals, registerScores, registerDiscover], args);
      if (r.code !== 0) throw Object.assign(new Error(r.stderr), r);
      return r;
    };

    it('hcs25 signals --jsonl streams signals and rejections', async () => {
      const { stdout } = await hcs25([
        'signals',
        '--topic',
        topic,
        '--publisher',
        operator,
        '--jsonl',
        '--subject',
        MCP,
      ]);
      const lines = stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; message: { subject: string } });
      expect(lines).toHaveLength(10);
      expect(lines.every((l) => l.type === 'signal' && l.message.subject === MCP)).toBe(true);
    });

    it('hcs25 scores: deterministic --json with --now, a ranked table, an HTML file, and --publish of format-3 op "score"', async () => {
      const now = soon().toISOString();
      const args = ['scores', '--topic', topic, '--publisher', operator, '--now', now];
      const a = await hcs25([...args, '--json']);
      const b = await hcs25([...args, '--json']);
      expect(b.stdout).toBe(a.stdout);
      const report = JSON.parse(a.stdout) as {
        subjects: Array<{
          subject: string;
          trustScores: { total: number };
          evidenceStrength: { basis: string; evalObservations: number };
        }>;
      };
      expect(report.subjects.map((s) => s.subject)).toEqual([MCP, A2A]);
      // Evals do not apply to MCP: its score rests on availability alone, and says so.
      expect(report.subjects.map((s) => s.evidenceStrength.basis)).toEqual(['availability-only', 'evals']);
      expect(report.subjects[1]!.evidenceStrength.evalObservations).toBeGreaterThan(0);

      const html = join(mkdtempSync(join(tmpdir(), 'hcs25-e2e-')), 'report.html');
      const table = await hcs25([...args, '--html', html]);
      expect(table.stdout.split('\n')[0]).toMatch(/^\s*#\s+SCORE\s+CONF\s+EVID\s+AVAILABILITY\s+MATH\s+SCIENCE\s/);
      expect(readFileSync(html, 'utf8')).toContain('<svg class="chart hist"');

      const scoreTopic = await writer.createTopic('hcs-25:0:86400');
      // One op "score" record per message.
      const published = await hcs25([...args, '--json', '--publish', '--score-topic', scoreTopic, '--pack', 'none']);
      const out = JSON.parse(published.stdout) as {
        published: Array<{ subject: string; sequenceNumber: number; transactionId: string }>;
      };
      // Submitted concurrently: the order on the topic is not the rank order.
      expect(out.published.map((p) => p.subject)).toEqual([MCP, A2A]);
      expect(out.published.map((p) => p.sequenceNumber).sort()).toEqual([1, 2]);
      const page = (await (await fetch(`${writer.mirrorRestUrl}/api/v1/topics/${scoreTopic}/messages`)).json()) as {
        messages: Array<{ message: string }>;
      };
      const scores = page.messages.map((m) =>
        scoreMessageV3Schema.parse(JSON.parse(Buffer.from(m.message, 'base64').toString('utf8'))),
      );
      expect(scores.find((m) => m.subject === MCP)).toMatchObject({
        trustScore: 90,
        trustScores: { total: 90 },
        breakdown: { adapters: [{ adapterId: 'availability', total: 90, components: [{ value: 90 }] }] },
      });
      expect(scores.find((m) => m.subject === A2A)).toMatchObject({
        trustScoreConfigVersion: DEFAULT_SCORING_CONFIG.trustScoreConfigVersion,
        trustScoreUpdatedAt: now,
      });
      // Each names its evidence: this topic, the range read, the allow-list and the config used.
      for (const score of scores) {
        expect(score.evidence).toMatchObject({
          topic,
          publishers: [operator],
          config: scoringConfigDigest(DEFAULT_SCORING_CONFIG),
        });
      }
      const mirror = new MirrorRestClient({ baseUrl: writer.mirrorRestUrl });
      const [tx] = (await mirror.getTransaction(out.published[0]!.transactionId)) ?? [];
      expect(tx).toBeDefined();
      await mirror.close();
      expect(Buffer.from(tx?.memo_base64 ?? '', 'base64').toString()).toBe('hcs25-tool/3:score');
    });

    it('a signal topic as `hcs25 topic create` makes it (format 3, or bare) is read without a note on its memo', async () => {
      for (const memo of [formatThreeTopicMemo('0.0.5'), formatThreeTopicMemo()]) {
        const own = await writer.createTopic(memo);
        const { stderr } = await hcs25(['signals', '--topic', own, '--publisher', operator, '--jsonl']);
        expect(stderr).not.toContain('memo');
      }
    });

    it('a foreign topic memo is shown with its terminal escapes escaped', async () => {
      const foreign = await writer.createTopic('evil\u001b]0;pwned\u0007\u202e memo');
      const { stderr } = await hcs25(['signals', '--topic', foreign, '--publisher', operator, '--jsonl']);
      expect(stderr).toContain('not an hcs-25 signal-topic memo');
      expect(stderr).toContain('evil\\x1b]0;pwned\\x07\\u202e memo');
      expect(stderr).not.toMatch(/[\u001b\u0007\u202e]/);
    });

    it('hcs25 scores names subjects from the registry their signals cite, from --names, or not at all (--no-names)', async () => {
      const registry = await writer.createTopic('hcs-2:0:86400');
      const record = { name: 'Calc\u001b[31m bot', protocol: 'a2a', endpoint: 'http://127.0.0.1:4999' };
      await writer.submit(registry, { p: 'hcs-2', op: 'register', t_id: registry, metadata: record });
      const dir = mkdtempSync(join(tmpdir(), 'hcs25-names-'));
      const discovered = await hcs25(['discover', '--registry', registry, '--json']);
      writeFileSync(join(dir, 'discovered.json'), discovered.stdout);
      const subject = (JSON.parse(discovered.stdout) as { agents: Array<{ subject: string }> }).agents[0]!.subject;
      const orphan = uaid('orphan.example.com');
      const named = await writer.createTopic('hcs-25:0:86400');
      const at = Date.now() - 60_000;
      await writer.submit(named, probe(subject, { seq: 1, at, run: 1, sources: [`hcs://2/${registry}`] }).message);
      await writer.submit(named, probe(orphan, { seq: 2, at, run: 1, sources: ['hcs://2/0.0.987654'] }).message);
      const args = ['scores', '--topic', named, '--publisher', operator];
      type Json = { subjects: Array<{ subject: string; label?: string }> };
      const labels = (stdout: string) =>
        Object.fromEntries((JSON.parse(stdout) as Json).subjects.map((x) => [x.subject, x.label]));

      // From the registry (discovery blanks control characters); the registry that does not exist is one note, and its subject keeps its native id.
      const fromRegistry = await hcs25([...args, '--json']);
      expect(labels(fromRegistry.stdout)).toEqual({ [subject]: 'Calc [31m bot', [orphan]: undefined });
      expect(fromRegistry.stderr.match(/registr(y|ies) unavailable/g)).toHaveLength(1);
      expect(fromRegistry.stderr).toContain('hcs://2/0.0.987654');
      const table = await hcs25(args);
      // Protocol, name and the native id, whole (a pipe is no terminal: nothing is cut).
      expect(table.stdout).toMatch(/ a2a +Calc \[31m bot +127\.0\.0\.1:4999\n/);
      expect(table.stdout).toMatch(/ a2a +- +orphan\.example\.com\n/);
      expect(table.stdout).not.toContain('\u001b');
      // hcs25 signals names subjects the same way, beside their native id.
      const listed = await hcs25(['signals', '--topic', named, '--publisher', operator]);
      expect(listed.stdout).toMatch(/ probe +\w+ +\d+ {2}Calc \[31m bot · 127\.0\.0\.1:4999/);
      expect(listed.stdout).toMatch(/ {2}orphan\.example\.com/);
      const unnamed = await hcs25(['signals', '--topic', named, '--publisher', operator, '--no-names']);
      expect(unnamed.stdout).not.toContain('Calc');

      // --no-names: no lookups, no note, native ids.
      const none = await hcs25([...args, '--json', '--no-names']);
      expect(labels(none.stdout)).toEqual({ [subject]: undefined, [orphan]: undefined });
      expect(none.stderr).not.toContain('unavailable');

      // --names: a subject → name object wins over the registry; agent records as `discover --json` and `hcs25 agents`
      // (JSON lines, no UAID: derived as run --agents derives it) write them.
      writeFileSync(join(dir, 'names.json'), JSON.stringify({ [orphan]: 'Orphan', [subject]: 'x'.repeat(200) }));
      const fromFile = labels((await hcs25([...args, '--json', '--names', join(dir, 'names.json')])).stdout);
      expect(fromFile[orphan]).toBe('Orphan');
      expect(fromFile[subject]).toHaveLength(48);
      expect(labels((await hcs25([...args, '--json', '--names', join(dir, 'discovered.json')])).stdout)[subject]).toBe(
        'Calc [31m bot',
      );
      // (A name read from a file is escaped, not blanked.)
      writeFileSync(
        join(dir, 'agents.jsonl'),
        `${JSON.stringify(record)}\n${JSON.stringify({ name: 'other', protocol: 'http', endpoint: 'http://127.0.0.1:1' })}\n`,
      );
      expect(labels((await hcs25([...args, '--json', '--names', join(dir, 'agents.jsonl')])).stdout)[subject]).toBe(
        'Calc\\x1b[31m bot',
      );
      await expect(hcs25([...args, '--names', join(dir, 'missing.json')])).rejects.toMatchObject({ code: 2 });
    });

    it('hcs25 scores --print-config prints the default scoring configuration', async () => {
      const { stdout } = await hcs25(['scores', '--print-config']);
      expect(parseScoringConfig(JSON.parse(stdout))).toEqual(DEFAULT_SCORING_CONFIG);
    });
  });
});
