import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { runEvals, failureOutcome, questionFor, type RunnerOptions } from '../../src/evaluate/runner.js';
import type { AnyEvalResult, EvalResult, ProbeEvalResult } from '../../src/evaluate/types.js';
import type { Progress } from '../../src/evaluate/progress.js';
import { loadScienceBank } from '../../src/evaluate/science.js';
import type { Agent } from '../../src/core/agent.js';
import type { AskFailure } from '../../src/evaluate/transports/types.js';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/fleet.js';
import { fakeAgents, fakeTransport, newLog, ok, rightAnswer } from './runner-helpers.js';

async function collect(it: AsyncIterable<AnyEvalResult>): Promise<AnyEvalResult[]> {
  const out: AnyEvalResult[] = [];
  for await (const r of it) out.push(r);
  return out;
}

const base: RunnerOptions = {
  evals: ['availability', 'math', 'science'],
  budgetMs: 5_000,
  concurrency: 4,
  seed: 'runner-test',
  allowPrivateEndpoints: false,
};

describe('runner against the sample agent fleet', () => {
  let fleet: AgentFleet;
  let results: AnyEvalResult[];
  const progress: Progress[] = [];

  beforeAll(async () => {
    fleet = await startAgentFleet({ slowMs: 20_000, hugeBytes: 1024 * 1024, flakyRetryAfterS: 1 });
    const agents: Agent[] = fleet.agents.map((r) => ({
      subject: `uaid:aid:fleet-${r.name};uid=0;proto=${r.protocol};nativeId=127.0.0.1`,
      name: r.name,
      protocol: r.protocol,
      ...('endpoint' in r ? { endpoint: r.endpoint } : {}),
      ...(r.model ? { model: r.model } : {}),
    }));
    results = await collect(
      runEvals(agents, {
        ...base,
        budgetMs: 3_000,
        concurrency: 8,
        allowPrivateEndpoints: true,
        onProgress: (p) => progress.push(p),
      }),
    );
  }, 60_000);
  afterAll(async () => {
    await fleet.stop();
  });

  const evalOf = (name: string, kind: 'math' | 'science') =>
    results.find((r): r is EvalResult => r.agent.name === name && r.kind === kind)!;
  const probeOf = (name: string) =>
    results.find((r): r is ProbeEvalResult => r.agent.name === name && r.kind === 'availability')!;

  it('returns one result per agent and eval', () => {
    expect(results).toHaveLength(fleet.agents.length * 3);
  });

  it.each(['perfect', 'a2a-calc', 'a2a-legacy', 'plain-http'])(
    '%s answers both evals correctly and compliantly',
    (name) => {
      for (const kind of ['math', 'science'] as const) {
        expect(evalOf(name, kind), `${name} ${kind}`).toMatchObject({
          outcome: 'correct',
          score: 100,
          compliant: true,
        });
      }
      expect(probeOf(name)).toMatchObject({ reachable: true });
    },
  );

  it('verbose is correct but not compliant', () => {
    expect(evalOf('verbose', 'math')).toMatchObject({ outcome: 'correct', score: 100, compliant: false });
    expect(evalOf('verbose', 'math').response).toMatch(/^The answer is \*\*\d+\*\*\.$/);
  });

  it('wrong is wrong', () => {
    expect(evalOf('wrong', 'math')).toMatchObject({ outcome: 'wrong', score: 0 });
    expect(evalOf('wrong', 'science')).toMatchObject({ outcome: 'wrong', score: 0 });
  });

  it('slow times out within the budget and scores 0', () => {
    expect(evalOf('slow', 'math')).toMatchObject({ outcome: 'timeout', score: 0, response: null });
    expect(probeOf('slow')).toMatchObject({ reachable: true });
  });

  it('flaky is retried after its Retry-After and then answers', () => {
    expect(evalOf('flaky', 'math')).toMatchObject({ outcome: 'correct', reason: 'answered on retry' });
  });

  it('garbage: its probe is unreachable, so its evals are not asked (skipped, probe-unreachable)', () => {
    expect(probeOf('garbage')).toMatchObject({ reachable: false, httpStatus: 500 });
    for (const kind of ['math', 'science'] as const) {
      expect(evalOf('garbage', kind)).toMatchObject({ outcome: 'skipped', score: 0, response: null, latencyMs: 0 });
      expect(evalOf('garbage', kind).reason).toMatch(/^probe-unreachable: /);
    }
  });

  it('huge is an error: too large', () => {
    expect(evalOf('huge', 'science')).toMatchObject({ outcome: 'error' });
    expect(evalOf('huge', 'science').reason).toMatch(/^too-large/);
  });

  it('mcp evals are skipped, its probe reachable', () => {
    expect(evalOf('mcp-tools', 'math')).toMatchObject({ outcome: 'skipped', score: 0 });
    expect(probeOf('mcp-tools')).toMatchObject({ reachable: true, transport: 'mcp' });
  });

  it('keeps the raw response and the question id', () => {
    const r = evalOf('perfect', 'science');
    expect(r.response).toMatch(/^[A-D]$/);
    expect(r.questionId).toMatch(/^sci:[a-z-]+:[a-z0-9-]+$/);
    expect(r.transport).toBe('openai');
    expect(r.grader).toBe('first-token@1');
  });

  it('reports progress up to the final counts', () => {
    const last = progress[progress.length - 1]!;
    expect(last).toMatchObject({ total: results.length, done: results.length, running: 0 });
    expect(last.correct + last.wrong + last.failed + last.skipped).toBe(results.length);
  });
});

describe('runner scheduling (injected transports)', () => {
  it('never runs more than `concurrency` evals at once, and uses all of it', async () => {
    const log = newLog();
    const agents = fakeAgents(20);
    const results = await collect(
      runEvals(agents, {
        ...base,
        concurrency: 5,
        transportFactory: () =>
          fakeTransport(log, async (p) => {
            await new Promise((r) => setTimeout(r, 5));
            return ok(rightAnswer(p));
          }),
      }),
    );
    expect(results).toHaveLength(60);
    expect(log.maxInFlight).toBe(5);
    expect(log.created).toBe(20);
    expect(log.closed).toBe(20);
  });

  it('streams results as they finish instead of at the end', { timeout: 10_000 }, async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const log = newLog();
    const agents = fakeAgents(4);
    const iterator = runEvals(agents, {
      ...base,
      evals: ['math'],
      transportFactory: (agent) =>
        fakeTransport(log, async (p) => {
          if (agent.name !== 'fake-0') await gate;
          return ok(rightAnswer(p));
        }),
    })[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toMatchObject({ agent: { name: 'fake-0' }, outcome: 'correct' });
    expect(log.inFlight).toBe(3); // the others are still being asked
    release();
    const rest: unknown[] = [];
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) rest.push(r.value);
    expect(rest).toHaveLength(3);
  });

  it('asks the same questions for the same seed and subject, and other questions for another seed', async () => {
    const bank = loadScienceBank();
    const agents = fakeAgents(12);
    const ids = async (seed: string) => {
      const log = newLog();
      const results = await collect(
        runEvals(agents, {
          ...base,
          evals: ['math', 'science'],
          seed,
          concurrency: 7,
          transportFactory: () => fakeTransport(log, (p) => ok(rightAnswer(p))),
        }),
      );
      return new Map(results.map((r) => [`${r.agent.subject} ${r.kind}`, (r as EvalResult).questionId]));
    };
    const a = await ids('seed-1');
    const b = await ids('seed-1');
    const c = await ids('seed-2');
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
    expect(a.get(`${agents[3]!.subject} math`)).toBe(questionFor('math', agents[3]!.subject, 'seed-1', bank).id);
  });

  it('stops when aborted: no results after the abort, every transport closed', async () => {
    const ctl = new AbortController();
    const log = newLog();
    const seen: AnyEvalResult[] = [];
    const run = runEvals(fakeAgents(30), {
      ...base,
      signal: ctl.signal,
      transportFactory: () =>
        fakeTransport(
          log,
          (p, _n, o) =>
            new Promise((resolve) => {
              const t = setTimeout(() => resolve(ok(rightAnswer(p))), 20);
              o.signal?.addEventListener('abort', () => {
                clearTimeout(t);
                resolve({ ok: false, kind: 'timeout', message: 'aborted', transient: false, latencyMs: 0 });
              });
            }),
        ),
    });
    for await (const r of run) {
      seen.push(r);
      if (seen.length === 5) ctl.abort();
    }
    expect(seen).toHaveLength(5);
    expect(seen.every((r) => r.kind === 'availability' || (r as EvalResult).outcome === 'correct')).toBe(true);
    expect(log.closed).toBe(log.created);
  });

  it('cleans up when the consumer stops early', async () => {
    const log = newLog();
    for await (const r of runEvals(fakeAgents(10), {
      ...base,
      transportFactory: () => fakeTransport(log, (p) => ok(rightAnswer(p))),
    })) {
      expect(r).toBeDefined();
      break;
    }
    expect(log.inFlight).toBe(0);
    expect(log.closed).toBe(log.created);
  });

  it('holds results bounded by the concurrency, not by the agents, when the consumer is slower than the agents', async () => {
    const held = async (n: number) => {
      const footprint = { ready: 0, maxReady: 0, queued: 0, maxQueued: 0, openTransports: 0, maxOpenTransports: 0 };
      const log = newLog();
      let count = 0;
      for await (const r of runEvals(fakeAgents(n), {
        ...base,
        concurrency: 4,
        footprint,
        transportFactory: () => fakeTransport(log, (p) => ok(rightAnswer(p))),
      })) {
        expect(r).toBeDefined();
        count++;
        // A consumer that yields to the event loop between results: the agents (zero latency) are faster.
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(count).toBe(n * 3);
      return footprint;
    };
    const small = await held(50);
    const large = await held(400);
    // The high-water mark is 2 × concurrency; a dead agent's skipped evals may come on top of it.
    for (const f of [small, large]) {
      expect(f.maxReady).toBeGreaterThan(0);
      expect(f.maxReady).toBeLessThanOrEqual(4 * 2 + 3);
      expect(f.maxQueued).toBeLessThanOrEqual(4 * 2);
      expect(f.maxOpenTransports).toBeLessThanOrEqual(4 * 3);
      expect(f.ready).toBe(0);
      expect(f.openTransports).toBe(0);
    }
    expect(large.maxReady).toBeLessThanOrEqual(small.maxReady + 3);
  });

  it('asks nothing more of an agent whose probe failed: its evals are not measured (skipped, probe-unreachable)', async () => {
    const logs = new Map<string, ReturnType<typeof newLog>>();
    const agents = fakeAgents(12);
    const dead = (name: string) => Number(name.split('-')[1]) % 3 === 0;
    const results = await collect(
      runEvals(agents, {
        ...base,
        concurrency: 3,
        transportFactory: (agent) => {
          const log = newLog();
          logs.set(agent.name, log);
          return fakeTransport(log, (p) => ok(rightAnswer(p)), {
            probe: () =>
              dead(agent.name)
                ? { reachable: false, latencyMs: 3, reason: 'connection refused' }
                : { reachable: true, latencyMs: 1, httpStatus: 200 },
          });
        },
      }),
    );
    expect(results).toHaveLength(36);
    for (const agent of agents) {
      const log = logs.get(agent.name)!;
      const mine = results.filter((r) => r.agent.name === agent.name);
      // The probe first, always; then the evals only for a live agent.
      expect(mine[0]!.kind).toBe('availability');
      expect(log.probes).toBe(1);
      expect(log.closed).toBe(1);
      if (dead(agent.name)) {
        expect(log.asks).toBe(0);
        for (const r of mine.slice(1)) {
          expect(r).toMatchObject({ outcome: 'skipped', score: 0, latencyMs: 0, response: null });
          expect((r as EvalResult).reason).toMatch(/^probe-unreachable: .*connection refused/);
          expect((r as EvalResult).questionId).toBe(
            questionFor(r.kind as 'math', agent.subject, base.seed, loadScienceBank()).id,
          );
        }
      } else {
        expect(log.asks).toBe(2);
        expect(mine.slice(1).every((r) => ['correct', 'wrong'].includes((r as EvalResult).outcome))).toBe(true);
      }
    }
  });

  it('without the probe, every eval is asked', async () => {
    const log = newLog();
    const results = await collect(
      runEvals(fakeAgents(5), {
        ...base,
        evals: ['math', 'science'],
        transportFactory: () =>
          fakeTransport(log, (p) => ok(rightAnswer(p)), { probe: () => ({ reachable: false, latencyMs: 1 }) }),
      }),
    );
    expect(results).toHaveLength(10);
    expect(log.asks).toBe(10);
    expect(log.probes).toBe(0);
  });

  it('refuses duplicate subjects, bad concurrency and unknown evals', async () => {
    const twice = [...fakeAgents(1), ...fakeAgents(1)];
    await expect(collect(runEvals(twice, base))).rejects.toThrow(UsageError);
    await expect(collect(runEvals(fakeAgents(1), { ...base, concurrency: 0 }))).rejects.toThrow(UsageError);
    await expect(collect(runEvals(fakeAgents(1), { ...base, evals: ['speed' as never] }))).rejects.toThrow(UsageError);
  });
});

describe('retries and outcome mapping', () => {
  const failure = (kind: AskFailure['kind'], extra: Partial<AskFailure> = {}): AskFailure => ({
    ok: false,
    kind,
    message: kind,
    transient: false,
    latencyMs: 1,
    ...extra,
  });

  async function mathWith(answers: Array<ReturnType<typeof ok> | AskFailure>, budgetMs = 5_000) {
    const log = newLog();
    const [result] = await collect(
      runEvals(fakeAgents(1), {
        ...base,
        evals: ['math'],
        budgetMs,
        transportFactory: () =>
          fakeTransport(log, (p, n) => {
            const a = answers[Math.min(n, answers.length - 1)]!;
            return a.ok ? ok(rightAnswer(p)) : a;
          }),
      }),
    );
    return { result: result as EvalResult, asks: log.asks };
  }

  it('retries a transient failure once, then grades the answer', async () => {
    const { result, asks } = await mathWith([
      failure('refused', { transient: true, message: 'connection reset' }),
      ok(''),
    ]);
    expect(asks).toBe(2);
    expect(result).toMatchObject({ outcome: 'correct', reason: 'answered on retry' });
  });

  it('waits Retry-After for a 429 and reports upstream-error if it is still limited', async () => {
    const limited = failure('rate-limited', { transient: true, retryAfterMs: 50, httpStatus: 429 });
    const { result, asks } = await mathWith([limited, limited]);
    expect(asks).toBe(2);
    expect(result).toMatchObject({ outcome: 'upstream-error', score: 0 });
    expect(result.reason).toMatch(/after one retry/);
  });

  it('does not retry when Retry-After does not fit the budget', async () => {
    const { result, asks } = await mathWith([failure('rate-limited', { transient: true, retryAfterMs: 60_000 })]);
    expect(asks).toBe(1);
    expect(result.outcome).toBe('upstream-error');
  });

  it('does not retry a 429 that names no Retry-After', async () => {
    const { result, asks } = await mathWith([failure('rate-limited', { transient: true, httpStatus: 429 }), ok('')]);
    expect(asks).toBe(1);
    expect(result.outcome).toBe('upstream-error');
  });

  it('never retries a deterministic failure', async () => {
    for (const kind of ['refused', 'protocol-error', 'too-large', 'auth-required', 'timeout'] as const) {
      const { asks } = await mathWith([failure(kind), ok('')]);
      expect(asks, kind).toBe(1);
    }
  });

  it.each([
    ['timeout', 'timeout'],
    ['refused', 'error'],
    ['protocol-error', 'error'],
    ['too-large', 'error'],
    ['http-error', 'upstream-error'],
    ['rate-limited', 'upstream-error'],
    ['agent-error', 'upstream-error'],
    ['auth-required', 'skipped'],
  ] as const)('%s → %s', (kind, outcome) => {
    expect(failureOutcome(failure(kind))).toBe(outcome);
  });

  it('skips evals on a transport that cannot ask, without asking', async () => {
    const log = newLog();
    const results = await collect(
      runEvals(fakeAgents(1, 'mcp'), {
        ...base,
        transportFactory: () => fakeTransport(log, () => ok('1'), { canAsk: false }),
      }),
    );
    expect(log.asks).toBe(0);
    expect(results.filter((r) => r.kind !== 'availability')).toEqual([
      expect.objectContaining({ outcome: 'skipped', score: 0 }),
      expect.objectContaining({ outcome: 'skipped', score: 0 }),
    ]);
  });

  it('grades empty and unparseable answers as such', async () => {
    const log = newLog();
    const texts = ['', 'no idea'];
    const results = await collect(
      runEvals(fakeAgents(2), {
        ...base,
        evals: ['math'],
        transportFactory: (agent) => fakeTransport(log, () => ok(texts[Number(agent.name.split('-')[1])]!)),
      }),
    );
    expect(results.map((r) => (r as EvalResult).outcome).sort()).toEqual(['empty', 'unparseable']);
  });
});

describe('progress bar', () => {
  it('renders counts and a bar proportional to done/total', async () => {
    const { renderProgress } = await import('../../src/evaluate/progress.js');
    expect(renderProgress({ total: 4, done: 2, running: 1, correct: 1, wrong: 1, failed: 0, skipped: 0 })).toBe(
      `[${'█'.repeat(12)}${'░'.repeat(12)}] 2/4  correct 1  wrong 1  failed 0  (1 running)`,
    );
    expect(renderProgress({ total: 2, done: 2, running: 0, correct: 0, wrong: 0, failed: 1, skipped: 1 })).toMatch(
      /\] 2\/2 {2}correct 0 {2}wrong 0 {2}failed 1 {2}skipped 1$/,
    );
  });
});
