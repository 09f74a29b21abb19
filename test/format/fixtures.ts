import type { Agent } from '../../src/core/agent.js';
import type { EvalResult, ProbeEvalResult } from '../../src/evaluate/types.js';

export const RUN = '01JDX3V9W5Q8K6T2N4M7P1R0ZA';
export const RUN_KEY = Buffer.alloc(32, 7);

export const agent: Agent = {
  subject:
    'uaid:aid:2ayFqipw6krtLto6minZALXx9qyKUrr17pEPCqtMyHHCZFzMRvSCKhr3dEVcRaM23i;uid=0;registry=hol;proto=a2a;nativeId=calc.example.com',
  name: 'calc-bot',
  protocol: 'a2a',
  endpoint: 'https://calc.example.com',
  source: 'hcs://2/0.0.1234',
};

export function evalResult(extra: Partial<EvalResult> = {}): EvalResult {
  return {
    kind: 'math',
    agent,
    questionId: 'math:add:37+58',
    outcome: 'correct',
    score: 100,
    answer: '95',
    compliant: true,
    latencyMs: 842,
    response: '95',
    transport: 'a2a',
    grader: 'first-token@1',
    fetchedAt: '2026-11-21T10:00:00.000Z',
    ...extra,
  };
}

export function probeResult(extra: Partial<ProbeEvalResult> = {}): ProbeEvalResult {
  return {
    kind: 'availability',
    agent,
    reachable: true,
    latencyMs: 120,
    httpStatus: 200,
    transport: 'a2a',
    fetchedAt: '2026-11-21T10:00:00.000Z',
    ...extra,
  };
}
