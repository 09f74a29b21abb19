/**
 * HCS-10 agents that talk before they answer (as standards-sdk agents do): a greeting before the question, a
 * greeting that reaches consensus after it, status notices, replies tagged `[Reply to #N]`. Only the reply to our
 * question is graded. Through the emulator with mirror lag; the sorting rules themselves as a table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@hashgraph/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HCS10_CHATTY_BEHAVIOURS,
  SAMPLE_GREETING,
  SDK_GREETING,
  SDK_GREETING_MEMO,
  startHcs10Fleet,
  type Hcs10Fleet,
} from '../../src/devtools/hcs10-agents.js';
import { runEvals } from '../../src/evaluate/runner.js';
import type { AnyEvalResult, EvalResult } from '../../src/evaluate/types.js';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import { ensureRunnerIdentity, type StoredIdentity } from '../../src/hcs10/identity.js';
import { classifyAgentMessage, type AgentMessageKind } from '../../src/hcs10/replies.js';
import { startLocalNode, type LocalNode } from '../../src/localnode/index.js';
import type { Agent } from '../../src/core/agent.js';
import { createTransport } from '../../src/evaluate/transports/index.js';

describe("sorting an agent's messages after our question (#7)", () => {
  const first = { questionSeq: 7, firstFromAgent: true, tagsReplies: false };
  const later = { questionSeq: 7, firstFromAgent: false, tagsReplies: false };
  const tagging = { questionSeq: 7, firstFromAgent: false, tagsReplies: true };
  const cases: Array<[string, string, string | undefined, typeof first, AgentMessageKind, string?]> = [
    ['tagged for our question', '[Reply to #7] 32', undefined, first, 'answer', '32'],
    ['tagged, lower case, colon', '[reply to #7]: 32', undefined, later, 'answer', '32'],
    ['tagged for an earlier question', '[Reply to #5] 41', undefined, later, 'other-reply'],
    ['tagged by memo only', '32', 'Bob response to message #7', later, 'answer', '32'],
    ['memo tag for another message', '32', 'Bob response to message #3', later, 'other-reply'],
    ['an SDK greeting (by its memo)', SDK_GREETING, SDK_GREETING_MEMO, first, 'greeting'],
    ['a hello as the first word', SAMPLE_GREETING, undefined, first, 'greeting'],
    ['a hello with an emoji first', '👋 Hi there! 2 + 2 = 4', undefined, first, 'greeting'],
    ['a typing notice', '{"type":"typing"}', undefined, first, 'system'],
    ['a system role', '{"role":"system","content":"rate limit: 41 left"}', undefined, later, 'system'],
    ['a status memo', 'processing', 'status update', later, 'system'],
    ['untagged talk from an agent that tags', 'By the way, 17 is prime', undefined, tagging, 'chatter'],
    ['the plain answer', '32', undefined, first, 'answer', '32'],
    ['a later "Hi," answer is still the answer', 'Hi, it is 32', undefined, later, 'answer', 'Hi, it is 32'],
    ['a JSON answer', '{"content":"32"}', undefined, first, 'answer'],
  ];
  it.each(cases)('%s', (_what, text, memo, context, kind, answerText) => {
    const verdict = classifyAgentMessage(text, memo, context);
    expect(verdict.kind).toBe(kind);
    if (answerText !== undefined) expect(verdict.text).toBe(answerText);
  });
});

describe('through the emulator with mirror lag', () => {
  /** Everything the evaluation ran on, stopped in afterAll. */
  interface World {
    node: LocalNode;
    client: Client;
    mirror: MirrorRestClient;
    stateDir: string;
    fleet?: Hcs10Fleet;
  }
  let world: World | undefined;
  let fleet: Hcs10Fleet;
  const results: AnyEvalResult[] = [];

  beforeAll(async () => {
    const node = await startLocalNode({
      ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 },
      mirrorLagMs: 300,
      quiet: true,
    });
    const w: World = {
      node,
      client: node.client(),
      mirror: new MirrorRestClient({ baseUrl: node.mirrorRestUrl, timeoutMs: 5_000 }),
      stateDir: mkdtempSync(join(tmpdir(), 'hcs25-chatty-')),
    };
    world = w;
    fleet = w.fleet = await startHcs10Fleet({ node, pollMs: 100, include: [...HCS10_CHATTY_BEHAVIOURS, 'silent'] });
    const identity: StoredIdentity = (
      await ensureRunnerIdentity({ client: w.client, stateDir: w.stateDir, network: 'local' })
    ).identity;
    const agents: Agent[] = fleet.agents.map((record) => ({
      ...record,
      subject: `uaid:aid:${record.name};uid=0;proto=hcs-10;nativeId=${record.accountId}`,
    }));
    for await (const r of runEvals(agents, {
      evals: ['math', 'science'],
      budgetMs: 30_000,
      concurrency: 8,
      seed: 'hcs10-chatty',
      allowPrivateEndpoints: true,
      transportFactory: (agent) =>
        createTransport(agent, {
          hcs10: {
            client: w.client,
            identity,
            mirror: w.mirror,
            poll: { minMs: 100, maxMs: 400, factor: 1.5 },
            budgetMs: agent.name === 'hcs10-silent' ? 3_000 : 30_000,
          },
        }),
    })) {
      results.push(r);
    }
  }, 120_000);

  afterAll(async () => {
    if (!world) return;
    await world.fleet?.stop();
    world.client.close();
    await world.mirror.close();
    await world.node.stop();
    rmSync(world.stateDir, { recursive: true, force: true });
  });

  const of = (name: string, kind: string) =>
    results.find((r) => r.agent.name === name && r.kind === kind) as EvalResult;

  it.each(HCS10_CHATTY_BEHAVIOURS)('grades only the reply to our question from the %s agent', (behaviour) => {
    for (const kind of ['math', 'science']) {
      const r = of(`hcs10-${behaviour}`, kind);
      expect(r.outcome, `${behaviour} ${kind}: ${r.reason} / ${r.response}`).toBe('correct');
      expect(r.response).not.toContain('Hello');
      expect(r.response).not.toContain('Reply to');
    }
  });

  it('asked every chatty agent both questions on one connection, and greeted once', () => {
    for (const behaviour of HCS10_CHATTY_BEHAVIOURS) {
      expect(fleet.running.find((a) => a.behaviour === behaviour)!.stats, behaviour).toMatchObject({
        connections: 1,
        messages: 2,
        replies: 2,
      });
    }
  });

  it('still times a silent agent out within its budget', () => {
    for (const kind of ['math', 'science'])
      expect(of('hcs10-silent', kind)).toMatchObject({
        outcome: 'timeout',
        reason: expect.stringMatching(/no reply within 3000 ms/),
      });
  });
});
