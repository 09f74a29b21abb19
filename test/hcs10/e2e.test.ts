/**
 * HCS-10 end to end on the emulator, mirror lag switched on: sample agents registered in an HCS-10 registry →
 * discovery → evaluation over HCS (connection request, connection_created, message, reply) → HCS-25 signals on a
 * signal topic, read back. Also: the silent agent times out within its budget, fee-gated inbound topics are skipped
 * unless allowed, and every HCS-10 transaction carries the memo HCS-10 prescribes (as the mirror node records it).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@hashgraph/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHcs10Fleet, type Hcs10Fleet } from '../../src/devtools/hcs10-agents.js';
import { runEvals } from '../../src/evaluate/runner.js';
import type { AnyEvalResult, EvalResult, ProbeEvalResult } from '../../src/evaluate/types.js';
import { readHcs1File } from '../../src/hedera/hcs1.js';
import { inscribeHcs1 } from '../../src/hedera/hcs1-write.js';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import { createTopic, submitMessage } from '../../src/hedera/tx.js';
import { ensureRunnerIdentity, loadIdentity, type StoredIdentity } from '../../src/hcs10/identity.js';
import {
  connectionCreatedOp,
  connectionTopicMemo,
  inboundTopicMemo,
  messageOp,
  parseIncoming,
  type SubmittedOp,
} from '../../src/hcs10/messages.js';
import { startLocalNode, type LocalNode } from '../../src/localnode/index.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import { discoverRegistry } from '../../src/discover/discover.js';
import { resolveAccountProfile } from '../../src/discover/hcs11.js';
import type { Agent } from '../../src/core/agent.js';
import { chainResolveContext } from '../../src/discover/chain-resolve.js';
import { buildSignalMessage, newRunKey, parseSignalMessage, TRANSACTION_MEMOS } from '../../src/format/index.js';
import { createHcs10Transport, type Hcs10TransportOptions } from '../../src/evaluate/transports/hcs10.js';
import { createTransport } from '../../src/evaluate/transports/index.js';

const MIRROR_LAG_MS = 300;
const SILENT_BUDGET_MS = 3_000;
const POLL = { minMs: 100, maxMs: 400, factor: 1.5 };

let node: LocalNode;
let fleet: Hcs10Fleet;
let client: Client;
let mirror: MirrorRestClient;
let stateDir: string;
let identity: StoredIdentity;
const submitted: SubmittedOp[] = [];

/** Polls until `fn` returns a value (the mirror lags consensus). */
async function eventually<T>(fn: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function hcs10Options(agent: Agent, overrides: Partial<Hcs10TransportOptions> = {}): Hcs10TransportOptions {
  return {
    client,
    identity,
    mirror,
    poll: POLL,
    budgetMs: agent.name === 'hcs10-silent' ? SILENT_BUDGET_MS : 30_000,
    onSubmitted: (op) => submitted.push(op),
    ...overrides,
  };
}

function transportFor(agent: Agent, overrides: Partial<Hcs10TransportOptions> = {}) {
  return createHcs10Transport(agent, hcs10Options(agent, overrides));
}

beforeAll(async () => {
  node = await startLocalNode({
    ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 },
    mirrorLagMs: MIRROR_LAG_MS,
    quiet: true,
  });
  client = node.client();
  mirror = new MirrorRestClient({ baseUrl: node.mirrorRestUrl, timeoutMs: 5_000 });
  stateDir = mkdtempSync(join(tmpdir(), 'hcs25-hcs10-'));
  fleet = await startHcs10Fleet({ node, pollMs: 100, paidAgentFeeHbar: 0.5, onSubmitted: (op) => submitted.push(op) });
  identity = (await ensureRunnerIdentity({ client, stateDir, network: 'local' })).identity;
});

afterAll(async () => {
  await fleet?.stop();
  client?.close();
  await mirror?.close();
  await node?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe('runner identity', () => {
  it('is stored, reused on the next run, and resolvable as an HCS-11 profile', async () => {
    expect(loadIdentity(stateDir, 'local', '0.0.2')).toEqual(identity);
    const again = await ensureRunnerIdentity({ client, stateDir, network: 'local' });
    expect(again.created).toBe(false);
    expect(again.identity).toEqual(identity);
    const profile = await eventually(
      () =>
        resolveAccountProfile('0.0.2', chainResolveContext(mirror))
          .catch(() => undefined)
          .then((p) => p ?? undefined),
      'the runner profile on the mirror',
    );
    expect(profile.doc).toMatchObject({
      type: 1,
      inboundTopicId: identity.inboundTopicId,
      outboundTopicId: identity.outboundTopicId,
    });
  });
});

describe('HCS-1 writer', () => {
  it('inscribes a multi-chunk file that the reader verifies; the topic has a submit key and no admin key', async () => {
    const bytes = randomBytes(5000); // incompressible: about 7 chunks of 1000 base64 characters
    const file = await inscribeHcs1(client, bytes, { mimeType: 'application/octet-stream' });
    expect(file.chunks).toBeGreaterThanOrEqual(7);
    // The reader refuses a topic without a submit key or with an admin key, and checks the SHA-256 in the memo.
    const read = await eventually(
      () => readHcs1File(mirror, file.topicId).catch(() => undefined),
      'the file on the mirror',
    );
    expect(read.bytes.equals(bytes)).toBe(true);
    expect(read.mimeType).toBe('application/octet-stream');
  });
});

describe('HCS-10 registry → discovery → evaluation over HCS → signals', () => {
  let agents: Agent[];
  let results: AnyEvalResult[];

  it('discovers every registered agent with its account and inbound topic', async () => {
    const found = await eventually(async () => {
      const r = await discoverRegistry({
        registry: fleet.registryTopicId,
        network: 'local',
        mirror,
        allowPrivateEndpoints: true,
      });
      return r.agents.length === fleet.agents.length ? r : undefined;
    }, 'all registrations on the mirror');
    expect(found.registry.kind).toBe('hcs-10');
    expect(found.skipped).toEqual([]);
    agents = found.agents;
    for (const record of fleet.agents) {
      const agent = agents.find((a) => a.accountId === record.accountId);
      expect(agent, record.name).toMatchObject({
        protocol: 'hcs-10',
        name: record.name,
        inboundTopicId: record.inboundTopicId,
      });
    }
  });

  it('evaluates them over HCS: correct answers, an hcs://1 answer, a timeout, a fee-gated skip', async () => {
    results = [];
    for await (const r of runEvals(agents, {
      evals: ['availability', 'math', 'science'],
      budgetMs: 30_000,
      concurrency: 12,
      seed: 'hcs10-e2e',
      allowPrivateEndpoints: true,
      // Through the shared factory, as the runner's default path would: createTransport hands hcs-10 agents to the HCS-10 transport.
      transportFactory: (agent) => createTransport(agent, { hcs10: hcs10Options(agent) }),
    })) {
      results.push(r);
    }
    expect(results).toHaveLength(agents.length * 3);
    const of = (name: string, kind: string) => results.find((r) => r.agent.name === name && r.kind === kind)!;
    for (const name of ['hcs10-correct', 'hcs10-large']) {
      for (const kind of ['math', 'science']) {
        const r = of(name, kind) as EvalResult;
        expect(r.outcome, `${name} ${kind}: ${r.reason}`).toBe('correct');
        expect(r.transport).toBe('hcs-10');
      }
      expect((of(name, 'availability') as ProbeEvalResult).reachable).toBe(true);
    }
    expect((of('hcs10-correct', 'math') as EvalResult).compliant).toBe(true);
    // The large agent pads its answer into an HCS-1 file: still correct, no longer a bare answer.
    expect((of('hcs10-large', 'math') as EvalResult).compliant).toBe(false);
    expect((of('hcs10-large', 'math') as EvalResult).response!.length).toBeGreaterThan(1000);

    for (const kind of ['math', 'science']) {
      const silent = of('hcs10-silent', kind) as EvalResult;
      expect(silent.outcome).toBe('timeout');
      expect(silent.reason).toMatch(/no reply within 3000 ms/);
      // Node's timers may fire a millisecond before performance.now() says the budget has passed.
      expect(silent.latencyMs).toBeGreaterThanOrEqual(SILENT_BUDGET_MS - 5);
      const paid = of('hcs10-paid', kind) as EvalResult;
      expect(paid.outcome).toBe('skipped');
      expect(paid.reason).toMatch(/fee-gated inbound topic \(HIP-991: 0\.5 ℏ.*--allow-topic-fees/);
    }
    expect((of('hcs10-silent', 'availability') as ProbeEvalResult).reachable).toBe(true);
    expect(of('hcs10-paid', 'availability')).toMatchObject({
      reachable: true,
      reason: expect.stringMatching(/fee-gated/),
    });
  });

  it('reused one connection per agent for its evals and closed it', async () => {
    const byAgent = new Map(fleet.running.map((a) => [a.name, a.stats]));
    expect(byAgent.get('hcs10-correct')).toMatchObject({ requests: 1, connections: 1, messages: 2, replies: 2 });
    expect(byAgent.get('hcs10-large')).toMatchObject({ connections: 1, replies: 2 });
    // The silent agent's connection was dropped after the first timeout, so the second eval asked on a new one.
    expect(byAgent.get('hcs10-silent')).toMatchObject({ requests: 2, connections: 2, replies: 0 });
    expect(byAgent.get('hcs10-paid')!.requests).toBe(0);
    await eventually(
      async () => (byAgent.get('hcs10-correct')!.closed === 1 ? true : undefined),
      'close_connection seen by the agent',
    );
  });

  it('publishes the results as HCS-25 signals that read back valid', async () => {
    const topic = await createSignalTopic(client);
    const run = '01JDX3V9W5Q8K6T2N4M7P1R0ZA';
    const context = { run, runKey: newRunKey() };
    for (const r of results) {
      const built = buildSignalMessage(r, context);
      await submitMessage(client, topic.topicId, built.json, TRANSACTION_MEMOS.signal);
    }
    const read = await eventually(async () => {
      const msgs = [];
      for await (const m of mirror.topicMessages(topic.topicId)) msgs.push(m);
      return msgs.length === results.length ? msgs : undefined;
    }, 'signals on the mirror');
    const signals = read.map((m) => parseSignalMessage(m.message));
    expect(signals.every((s) => s.ok)).toBe(true);
    const statuses = signals.flatMap((s) =>
      s.ok && s.message.op === 'signal' ? [`${s.message.signal}:${s.message.status}`] : [],
    );
    expect(statuses.filter((s) => s === 'simple-evals.math:ok')).toHaveLength(2);
    expect(statuses.filter((s) => s === 'simple-evals.math:timeout')).toHaveLength(1);
    expect(statuses.filter((s) => s === 'simple-evals.science:missing')).toHaveLength(1);
    expect(signals.every((s) => s.ok && s.message.op === 'signal' && s.message.subject.includes('proto=hcs-10'))).toBe(
      true,
    );
  });
});

describe('HIP-991 fee-gated inbound topics', () => {
  it('are paid when allowed, up to the cap', async () => {
    const paid = fleet.agents.find((a) => a.name === 'hcs10-paid')!;
    const agent: Agent = {
      subject: 'uaid:test',
      name: paid.name,
      protocol: 'hcs-10',
      accountId: paid.accountId,
      inboundTopicId: paid.inboundTopicId,
    };

    const capped = transportFor(agent, { topicFees: { allow: true, maxHbar: 0.25 } });
    const refused = await capped.ask('What is 2 + 3?', { budgetMs: 30_000 });
    expect(refused).toMatchObject({
      ok: false,
      kind: 'auth-required',
      message: expect.stringMatching(/above the cap of 0\.25/),
    });
    await capped.close?.();

    const allowed = transportFor(agent, { topicFees: { allow: true, maxHbar: 1 } });
    const answer = await allowed.ask('What is 2 + 3?', { budgetMs: 30_000 });
    expect(answer).toMatchObject({
      ok: true,
      text: '5',
      meta: { topicFeeTinybars: 50_000_000, reusedConnection: false },
    });
    const second = await allowed.ask('What is 4 * 3?', { budgetMs: 30_000 });
    expect(second).toMatchObject({ ok: true, text: '12', meta: { reusedConnection: true } });
    await allowed.close?.();
  });
});

describe('who may answer for an agent', () => {
  /**
   * Plays an agent by hand, paying with `as`: waits for a connection request on `inboundTopicId`, opens a public
   * connection topic, confirms in the agent's name and answers "5" to the first message, if one comes.
   */
  async function answerAs(as: Client, inboundTopicId: string, agentAccountId: string): Promise<void> {
    const requestSeq = await eventually(async () => {
      for await (const m of mirror.topicMessages(inboundTopicId)) {
        const p = parseIncoming(m.message);
        if (p.ok && p.op.op === 'connection_request') return m.sequenceNumber;
      }
      return undefined;
    }, 'a connection request');
    const topicId = await createTopic(as, { memo: connectionTopicMemo(inboundTopicId, requestSeq) });
    const operatorId = `${inboundTopicId}@${agentAccountId}`;
    const created = connectionCreatedOp({
      connectionTopicId: topicId,
      connectedAccountId: '0.0.2',
      operatorId,
      connectionId: requestSeq,
    });
    await submitMessage(as, inboundTopicId, created.body, created.memo);
    // A requester that did not believe the confirmation never asks: stop waiting after its budget.
    const asked = await eventually(
      async () => {
        for await (const m of mirror.topicMessages(topicId)) if (parseIncoming(m.message).ok) return true;
        return undefined;
      },
      'the question',
      4_000,
    ).catch(() => false);
    if (!asked) return;
    const reply = messageOp({ operatorId, data: '5' });
    await submitMessage(as, topicId, reply.body, reply.memo);
  }

  it("only the agent's own account: a confirmation and answer paid by anyone else are ignored", async () => {
    const [owner, forger] = node.accounts.filter((a) => a.type === 'ED25519');
    const ownerClient = node.client(owner!);
    const forgerClient = node.client(forger!);
    try {
      for (const [as, expectOk] of [
        [forgerClient, false],
        [ownerClient, true],
      ] as const) {
        const inbound = await createTopic(client, { memo: inboundTopicMemo(owner!.accountId) });
        const agent: Agent = {
          subject: 'uaid:manual',
          name: 'manual',
          protocol: 'hcs-10',
          accountId: owner!.accountId,
          inboundTopicId: inbound,
        };
        await eventually(() => mirror.getTopic(inbound).then((t) => t ?? undefined), 'the inbound topic');
        const transport = transportFor(agent, { budgetMs: 3_000, recordOutbound: false, closeOnFinish: false });
        const [result] = await Promise.all([
          transport.ask('What is 2 + 3?', { budgetMs: 3_000 }),
          answerAs(as, inbound, owner!.accountId),
        ]);
        if (expectOk) expect(result).toMatchObject({ ok: true, text: '5' });
        else
          expect(result).toMatchObject({ ok: false, kind: 'timeout', message: 'no connection_created within 3000 ms' });
        await transport.close?.();
      }
    } finally {
      ownerClient.close();
      forgerClient.close();
    }
  });
});

describe('transaction memos', () => {
  it('every HCS-10 operation carries hcs-10:op:{op}:{topicType} on the ledger', async () => {
    const expected: Record<string, string[]> = {
      register: ['hcs-10:op:0:0'],
      connection_request: ['hcs-10:op:3:1', 'hcs-10:op:3:2'],
      connection_created: ['hcs-10:op:4:1', 'hcs-10:op:4:2'],
      message: ['hcs-10:op:6:3'],
      close_connection: ['hcs-10:op:5:3'],
      connection_closed: ['hcs-10:op:5:2'],
    };
    const seen = new Set(submitted.map((s) => s.memo));
    for (const memos of Object.values(expected)) for (const memo of memos) expect(seen, memo).toContain(memo);
    // What the mirror node recorded for each transaction, and what each message is, agree with the table.
    for (const s of submitted) {
      expect(expected[s.op], s.op).toContain(s.memo);
      const tx = await eventually(
        () => mirror.getTransaction(s.transactionId).then((t) => t ?? undefined),
        `transaction ${s.transactionId}`,
      );
      expect(Buffer.from(tx[0]!.memo_base64 ?? '', 'base64').toString('utf8')).toBe(s.memo);
      const msg = await mirror.getTopicMessage(s.topicId, s.seq);
      const parsed = JSON.parse(msg!.message.toString('utf8')) as { p: string; op: string };
      expect(parsed).toMatchObject({ p: 'hcs-10', op: s.op });
      if (s.memo.endsWith(':1') && s.op === 'connection_request') expect(parseIncoming(msg!.message).ok).toBe(true);
    }
  });
});
