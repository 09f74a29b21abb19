import type { Agent } from '../../src/core/agent.js';
import type { AskOptions, AskResult, ProbeResult, Transport } from '../../src/evaluate/transports/types.js';

export function fakeAgents(n: number, protocol: Agent['protocol'] = 'openai'): Agent[] {
  return Array.from({ length: n }, (_, i) => ({
    subject: `uaid:aid:fake-${i};uid=0;proto=${protocol};nativeId=agent${i}.example`,
    name: `fake-${i}`,
    protocol,
    endpoint: `https://agent${i}.example`,
  }));
}

/** Computes the right answer from the prompt (math only) or answers a fixed letter. */
export function rightAnswer(prompt: string): string {
  const m = /(\d+) ([+\-×]) (\d+)\?/.exec(prompt);
  if (!m) return 'A';
  const a = Number(m[1]);
  const b = Number(m[3]);
  return String(m[2] === '+' ? a + b : m[2] === '-' ? a - b : a * b);
}

export interface FakeTransportLog {
  asks: number;
  probes: number;
  closed: number;
  created: number;
  inFlight: number;
  maxInFlight: number;
}

export function newLog(): FakeTransportLog {
  return { asks: 0, probes: 0, closed: 0, created: 0, inFlight: 0, maxInFlight: 0 };
}

/** A transport scripted per call: `answer` returns the AskResult (or a promise of it) for the n-th ask. */
export function fakeTransport(
  log: FakeTransportLog,
  answer: (prompt: string, n: number, options: AskOptions) => AskResult | Promise<AskResult>,
  extra: { canAsk?: boolean; probe?: () => ProbeResult | Promise<ProbeResult> } = {},
): Transport {
  log.created += 1;
  let n = 0;
  const track = async <T>(fn: () => T | Promise<T>): Promise<T> => {
    log.inFlight += 1;
    log.maxInFlight = Math.max(log.maxInFlight, log.inFlight);
    try {
      return await fn();
    } finally {
      log.inFlight -= 1;
    }
  };
  return {
    protocol: 'openai',
    canAsk: extra.canAsk ?? true,
    ask: (prompt, options) => {
      log.asks += 1;
      const i = n++;
      return track(() => answer(prompt, i, options));
    },
    probe: () => {
      log.probes += 1;
      return track(() => (extra.probe ? extra.probe() : { reachable: true, latencyMs: 1, httpStatus: 200 }));
    },
    close: async () => {
      log.closed += 1;
    },
  };
}

export function ok(text: string): AskResult {
  return { ok: true, text, latencyMs: 1, meta: {} };
}
