import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MessageTooLargeError } from '../../src/core/errors.js';
import {
  MAX_MESSAGE_BYTES,
  buildRevealMessage,
  buildScoreMessage,
  buildSignalMessage,
  parseSignalMessage,
  questionHash,
  responseHash,
  signalMessageSchema,
  statusForOutcome,
} from '../../src/format/index.js';
import { EVAL_OUTCOMES } from '../../src/format/protocol.js';
import { RUN, RUN_KEY, agent, evalResult, probeResult } from './fixtures.js';

describe('buildSignalMessage', () => {
  it('builds the DESIGN §3.1 shape for a correct math answer', () => {
    const { message, json, bytes } = buildSignalMessage(evalResult(), { run: RUN, runKey: RUN_KEY });
    expect(message).toMatchObject({
      p: 'hcs-25',
      op: 'signal',
      v: 1,
      signal: 'simple-evals.math',
      subject: agent.subject,
      status: 'ok',
      fetchedAt: '2026-11-21T10:00:00.000Z',
      run: RUN,
      sources: ['hcs://2/0.0.1234'],
      data: {
        outcome: 'correct',
        score: 100,
        answer: '95',
        compliant: true,
        latencyMs: 842,
        grader: 'first-token@1',
        transport: 'a2a',
      },
    });
    expect(bytes).toBe(Buffer.byteLength(json));
    expect(bytes).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(JSON.parse(json)).toEqual(message);
  });

  it('hashes the question id with HMAC-SHA256 of the run key, first 16 bytes, base64url', () => {
    const expected = createHmac('sha256', RUN_KEY)
      .update('math:add:37+58')
      .digest()
      .subarray(0, 16)
      .toString('base64url');
    const { message } = buildSignalMessage(evalResult(), { run: RUN, runKey: RUN_KEY });
    expect(message.signal !== 'availability.probe' && message.data.questionHash).toBe(`hs256:${expected}`);
    expect(questionHash(Buffer.alloc(32, 8), 'math:add:37+58')).not.toBe(`hs256:${expected}`);
  });

  it('hashes the raw response with SHA-256 base64url', () => {
    const hex = createHash('sha256').update('The answer is **95**.').digest('hex');
    expect(responseHash('The answer is **95**.')).toBe(`sha256:${Buffer.from(hex, 'hex').toString('base64url')}`);
    expect(responseHash('The answer is **95**.')).toHaveLength(50);
  });

  it.each(EVAL_OUTCOMES)('maps outcome %s to an HCS-25 status and a 0/100 score', (outcome) => {
    const { message } = buildSignalMessage(evalResult({ outcome, answer: null, response: null }), {
      run: RUN,
      runKey: RUN_KEY,
    });
    const expected = {
      correct: 'ok',
      wrong: 'ok',
      unparseable: 'ok',
      empty: 'ok',
      timeout: 'timeout',
      error: 'error',
      'upstream-error': 'error',
      skipped: 'missing',
    }[outcome];
    expect(message.status).toBe(expected);
    expect(statusForOutcome(outcome)).toBe(expected);
    expect(message.signal !== 'availability.probe' && message.data.score).toBe(outcome === 'correct' ? 100 : 0);
  });

  it('builds availability probes', () => {
    const up = buildSignalMessage(probeResult(), { run: RUN, runKey: RUN_KEY }).message;
    expect(up).toMatchObject({
      signal: 'availability.probe',
      status: 'ok',
      data: { reachable: true, score: 100, httpStatus: 200, latencyMs: 120 },
    });
    const down = buildSignalMessage(
      probeResult({ reachable: false, reason: 'timeout after 5000 ms', httpStatus: undefined }),
      { run: RUN, runKey: RUN_KEY },
    ).message;
    expect(down).toMatchObject({ status: 'timeout', data: { reachable: false, score: 0, reason: 'timeout' } });
    const refused = buildSignalMessage(
      probeResult({ reachable: false, reason: 'refused: ECONNREFUSED', httpStatus: undefined }),
      { run: RUN, runKey: RUN_KEY },
    ).message;
    expect(refused).toMatchObject({ status: 'error', data: { reason: 'refused' } });
  });

  it('keeps only reason codes, never free text', () => {
    const { message } = buildSignalMessage(
      evalResult({ outcome: 'unparseable', reason: 'ambiguous', response: 'A or B' }),
      { run: RUN, runKey: RUN_KEY },
    );
    expect(message.signal !== 'availability.probe' && message.data.reason).toBe('ambiguous');
    const free = buildSignalMessage(evalResult({ outcome: 'error', reason: '«Sorry, I cannot»' }), {
      run: RUN,
      runKey: RUN_KEY,
    }).message;
    expect(free.signal !== 'availability.probe' && free.data.reason).toBe('error');
  });

  it('refuses a message over 1024 bytes with a typed error', () => {
    const long = { ...agent, subject: `uaid:aid:${'x'.repeat(500)}`, source: `hcs://2/${'9'.repeat(150)}` };
    const run = () =>
      buildSignalMessage(evalResult({ agent: long }), {
        run: RUN,
        runKey: RUN_KEY,
        sources: Array(4).fill(`hcs://2/${'9'.repeat(150)}`),
      });
    expect(run).toThrow(MessageTooLargeError);
    try {
      run();
    } catch (err) {
      expect((err as MessageTooLargeError).bytes).toBeGreaterThan(1024);
      expect((err as MessageTooLargeError).code).toBe('MESSAGE_TOO_LARGE');
    }
  });

  it('counts UTF-8 bytes, not characters', () => {
    const wide = { ...agent, subject: `uaid:aid:${'é'.repeat(250)}` };
    const { bytes, json } = buildSignalMessage(evalResult({ agent: wide }), { run: RUN, runKey: RUN_KEY });
    expect(bytes).toBeGreaterThan(json.length);
  });

  it('builds score and reveal messages', () => {
    const score = buildScoreMessage({
      subject: agent.subject,
      trustScores: { total: 57.5, availability: 90, 'simple-math': 100, 'simple-science': 0 },
      trustScoreConfigVersion: 1,
      trustScoreUpdatedAt: '2026-11-21T10:05:00.000Z',
      trustConfidence: 0.8,
    });
    expect(parseSignalMessage(score.json, { encoding: 'utf8' })).toEqual({ ok: true, message: score.message });
    const reveal = buildRevealMessage(RUN, RUN_KEY);
    expect(reveal.message).toEqual({ p: 'hcs-25', op: 'reveal', v: 1, run: RUN, key: RUN_KEY.toString('base64url') });
  });
});

describe('redaction property', () => {
  const outcome = fc.constantFrom(...EVAL_OUTCOMES);
  const questionId = fc.oneof(
    fc
      .tuple(fc.integer({ min: 10, max: 100 }), fc.integer({ min: 10, max: 100 }))
      .map(([a, b]) => `math:add:${a}+${b}`),
    fc.tuple(fc.integer({ min: 2, max: 12 }), fc.integer({ min: 2, max: 12 })).map(([a, b]) => `math:mul:${a}*${b}`),
    fc.stringMatching(/^[a-z]{3,12}$/).map((slug) => `sci:physics:${slug}`),
  );
  // Responses longer than any answer token: the whole text must never reach the chain.
  const response = fc.string({ minLength: 17, maxLength: 400, unit: 'grapheme' });

  it('no raw response and no plain question id ever appear in a built message', () => {
    fc.assert(
      fc.property(
        outcome,
        questionId,
        response,
        fc.string({ maxLength: 40 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        (o, qid, resp, answer, key) => {
          const built = buildSignalMessage(
            evalResult({ outcome: o, questionId: qid, response: resp, answer, reason: resp }),
            {
              run: RUN,
              runKey: Buffer.from(key),
            },
          );
          expect(built.json.includes(qid)).toBe(false);
          expect(built.json.includes(JSON.stringify(resp).slice(1, -1))).toBe(false);
          expect(built.bytes).toBeLessThanOrEqual(1024);
          expect(signalMessageSchema.safeParse(JSON.parse(built.json)).success).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});
