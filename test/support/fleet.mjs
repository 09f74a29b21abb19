// Eval results of a synthetic fleet, 3 per agent (availability, math, science), with real `buildUaid` UAIDs
// (~120-140 characters) and deterministic outcomes, latencies and times. JavaScript over the build (dist/), for tests
// whose child processes cannot load TypeScript.
import { createHash } from 'node:crypto';

const DIST = (path) => new URL(`../../dist/${path}`, import.meta.url).href;

const PROTOCOLS = ['a2a', 'openai', 'http', 'mcp'];
const DOMAINS = ['example.com', 'agents.dev', 'ai-hub.io', 'cloud-run.app'];

const rand = (i, k) => createHash('sha256').update(`${i}:${k}`).digest().readUInt32BE(0);

/** `agents` × 3 eval results; agent i answers about 1.4 s after agent i-1, starting at `t0` (ms). */
export async function syntheticResults(agents, t0 = Date.parse('2026-11-21T10:00:00.000Z')) {
  const { buildUaid } = await import(DIST('discover/uaid.js'));
  const results = [];
  for (let i = 0; i < agents; i++) {
    const protocol = PROTOCOLS[i % PROTOCOLS.length];
    const endpoint = `https://agent-${i}.${DOMAINS[i % DOMAINS.length]}`;
    const subject = await buildUaid({ name: `agent-${i}`, protocol, network: 'testnet', endpoint });
    const agent = { subject, name: `agent-${i}`, protocol, endpoint, source: 'hcs://2/0.0.4815162' };
    const at = (dt) => new Date(t0 + i * 1379 + dt).toISOString();
    const common = { agent, transport: protocol, grader: 'first-token@1', compliant: true };
    const [a, b] = [10 + (rand(i, 1) % 90), 10 + (rand(i, 2) % 90)];
    const correct = rand(i, 3) % 4 !== 0;
    const answer = String(correct ? a + b : a + b + 1);
    const letter = 'ABCD'[rand(i, 4) % 4];
    const reachable = rand(i, 5) % 10 !== 0;
    results.push(
      {
        kind: 'availability',
        agent,
        reachable,
        latencyMs: 40 + (rand(i, 6) % 900),
        httpStatus: reachable ? 200 : 503,
        ...(reachable ? {} : { reason: 'server error' }),
        transport: protocol,
        fetchedAt: at(0),
      },
      {
        ...common,
        kind: 'math',
        questionId: `math:add:${a}+${b}`,
        outcome: correct ? 'correct' : 'wrong',
        score: correct ? 100 : 0,
        answer,
        latencyMs: 300 + (rand(i, 7) % 4000),
        response: answer,
        fetchedAt: at(1000 + (rand(i, 8) % 3000)),
      },
      {
        ...common,
        kind: 'science',
        questionId: `sci:physics:q${rand(i, 9) % 200}`,
        outcome: 'correct',
        score: 100,
        answer: letter,
        latencyMs: 300 + (rand(i, 10) % 4000),
        response: letter,
        fetchedAt: at(2000 + (rand(i, 11) % 3000)),
      },
    );
  }
  return results;
}
