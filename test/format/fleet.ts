/** A deterministic fleet of realistic evaluated agents (UAIDs of the `buildUaid` shape, ~125 characters). */
import { createHash } from 'node:crypto';
import type { AnyEvalResult } from '../../src/evaluate/types.js';
import type { Agent, Protocol } from '../../src/core/agent.js';
import { buildSignalV2 } from '../../src/format/write.js';
import type { SignalMessageV2 } from '../../src/format/schema-v2.js';
import { RUN, RUN_KEY } from './fixtures.js';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const PROTOS: Protocol[] = ['a2a', 'openai', 'http', 'mcp'];
const DOMAINS = ['example.com', 'agents.dev', 'ai-hub.io', 'cloud-run.app'];

function base58(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE58[Number(n % 58n)]! + out;
    n /= 58n;
  }
  return out;
}

/** The shape `buildUaid` gives an HTTP-style agent: `uaid:aid:<base58 SHA-384>;uid=0;registry=self;proto=…;nativeId=host`. */
export function fleetAgent(i: number): Agent {
  const protocol = PROTOS[i % PROTOS.length]!;
  const host = `agent-${i}.${DOMAINS[i % DOMAINS.length]}`;
  const id = base58(createHash('sha384').update(`agent-${i}`).digest());
  const proto = protocol === 'http' ? 'rest' : protocol;
  return {
    subject: `uaid:aid:${id};uid=0;registry=self;proto=${proto};nativeId=${host}`,
    name: `agent-${i}`,
    protocol,
    endpoint: `https://${host}`,
    source: 'hcs://2/0.0.4815162',
  };
}

/** Probe, math and science results of agent i, with varied outcomes and latencies. */
export function fleetResults(i: number): AnyEvalResult[] {
  const agent = fleetAgent(i);
  const at = Date.parse('2026-11-21T10:00:00.000Z') + i * 1_379;
  const iso = (dt: number) => new Date(at + dt).toISOString();
  const r = (k: number) => createHash('sha256').update(`${i}:${k}`).digest().readUInt32BE(0);
  const transport = agent.protocol;
  const common = { agent, transport, grader: 'first-token@1' as const, compliant: true };
  const a = 10 + (r(1) % 90);
  const b = 10 + (r(2) % 90);
  const correct = r(3) % 4 !== 0;
  const answer = String(correct ? a + b : a + b + 1);
  const letter = 'ABCD'[r(4) % 4]!;
  return [
    {
      kind: 'availability',
      agent,
      reachable: r(5) % 10 !== 0,
      latencyMs: 40 + (r(6) % 900),
      httpStatus: 200,
      transport,
      fetchedAt: iso(0),
    },
    {
      ...common,
      kind: 'math',
      questionId: `math:add:${a}+${b}`,
      outcome: correct ? 'correct' : 'wrong',
      score: correct ? 100 : 0,
      answer,
      latencyMs: 300 + (r(7) % 4000),
      response: answer,
      fetchedAt: iso(1_000 + (r(8) % 3000)),
    },
    {
      ...common,
      kind: 'science',
      questionId: `sci:physics:q${r(9) % 200}`,
      outcome: 'correct',
      score: 100,
      answer: letter,
      latencyMs: 300 + (r(10) % 4000),
      response: `${letter}`,
      fetchedAt: iso(2_000 + (r(11) % 3000)),
    },
  ];
}

/** The v2 signals of agents 0..n-1, in the order a run publishes them (agent by agent). */
export function fleetSignals(n: number): SignalMessageV2[] {
  const out: SignalMessageV2[] = [];
  for (let i = 0; i < n; i++)
    for (const result of fleetResults(i)) out.push(buildSignalV2(result, { run: RUN, runKey: RUN_KEY }).message);
  return out;
}
