import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AnyEvalResult } from '../../src/evaluate/types.js';
import {
  FAILURE_REASONS,
  buildSignalV2,
  canonicalSignalId,
  failureReason,
  questionHash,
  readMessage,
  responseHashV2,
  signalMessageV2Schema,
  signalStatus,
} from '../../src/format/index.js';
import { EVAL_OUTCOMES } from '../../src/format/protocol.js';
import { RUN, RUN_KEY, agent, evalResult, probeResult } from './fixtures.js';

const ctx = { run: RUN, runKey: RUN_KEY };

describe('buildSignalV2', () => {
  it('builds a v2 signal with the catalog id, UAID-vocabulary transport and keyed hashes', () => {
    const { message, json, bytes } = buildSignalV2(evalResult(), ctx);
    expect(message).toEqual({
      p: 'hcs-25',
      op: 'signal',
      v: 2,
      signal: 'simple-evals.a2a_math',
      subject: agent.subject,
      status: 'ok',
      fetchedAt: '2026-11-21T10:00:00.000Z',
      run: RUN,
      sources: ['hcs://2/0.0.1234'],
      data: {
        outcome: 'correct',
        score: 100,
        questionHash: questionHash(RUN_KEY, 'math:add:37+58'),
        answer: '95',
        responseHash: responseHashV2(RUN_KEY, 'simple-evals.a2a_math', agent.subject, '95'),
        compliant: true,
        latencyMs: 842,
        grader: 'first-token@1',
        transport: 'a2a',
      },
    });
    expect(bytes).toBe(Buffer.byteLength(json));
    expect(readMessage(json, { encoding: 'utf8' })).toEqual({
      ok: true,
      encoding: 'json',
      items: [{ kind: 'signal', index: 0, message }],
    });
  });

  it('science and availability get their catalog ids; http is published as rest, like the UAID proto', () => {
    expect(
      buildSignalV2(evalResult({ kind: 'science', questionId: 'sci:physics:x', answer: 'B' }), ctx).message.signal,
    ).toBe('simple-evals.a2a_science');
    const probe = buildSignalV2(probeResult({ transport: 'http' }), ctx).message;
    expect(probe).toMatchObject({
      signal: 'availability.probe',
      status: 'ok',
      data: { reachable: true, score: 100, transport: 'rest', httpStatus: 200 },
    });
    expect(probe.data).not.toHaveProperty('reason');
  });

  it('a skipped eval carries no question hash (no question was asked), no answer and no response hash', () => {
    const { message } = buildSignalV2(
      evalResult({ outcome: 'skipped', score: 0, answer: null, response: null, reason: 'MCP has no chat operation' }),
      ctx,
    );
    expect(message.status).toBe('missing');
    expect(message.data).not.toHaveProperty('questionHash');
    expect(message.data).not.toHaveProperty('answer');
    expect(message.data).not.toHaveProperty('responseHash');
    expect(message.data).toMatchObject({ reason: 'not-chat-capable', score: 0 });
  });

  it('a measured failure is ok with score 0; nothing measured is timeout/error/missing (reference mapping)', () => {
    const status = (r: AnyEvalResult) => buildSignalV2(r, ctx).message.status;
    expect(status(evalResult({ outcome: 'wrong', score: 0, answer: '96' }))).toBe('ok');
    expect(status(evalResult({ outcome: 'unparseable', score: 0, answer: null, reason: 'ambiguous' }))).toBe('ok');
    expect(status(evalResult({ outcome: 'empty', score: 0, answer: null, response: '' }))).toBe('ok');
    expect(
      status(
        evalResult({
          outcome: 'timeout',
          score: 0,
          answer: null,
          response: null,
          reason: 'timeout: no answer within 30000 ms',
        }),
      ),
    ).toBe('timeout');
    expect(
      status(
        evalResult({
          outcome: 'upstream-error',
          score: 0,
          answer: null,
          response: null,
          reason: 'http-error: HTTP 503',
        }),
      ),
    ).toBe('error');
    const down = buildSignalV2(probeResult({ reachable: false, httpStatus: 500, reason: 'server error' }), ctx).message;
    expect(down).toMatchObject({ status: 'ok', data: { reachable: false, score: 0, reason: 'http-5xx' } });
    expect(
      status(probeResult({ reachable: false, httpStatus: undefined, reason: 'timeout: no answer within 5000 ms' })),
    ).toBe('ok');
    expect(
      status(
        probeResult({
          reachable: false,
          httpStatus: undefined,
          reason:
            'refused: refused to connect to non-public address 10.0.0.1 (private endpoints are not allowed; see --allow-private-endpoints)',
        }),
      ),
    ).toBe('missing');
    expect(
      status(probeResult({ reachable: false, httpStatus: undefined, reason: 'timeout: aborted by the caller' })),
    ).toBe('missing');
  });

  it('every built v2 signal validates, and reasons appear only on failures', () => {
    const result = fc.oneof(
      fc
        .record({
          outcome: fc.constantFrom(...EVAL_OUTCOMES),
          reason: fc.option(fc.string(), { nil: undefined }),
          kind: fc.constantFrom('math' as const, 'science' as const),
        })
        .map(({ outcome, reason, kind }) =>
          evalResult({
            kind,
            outcome,
            score: outcome === 'correct' ? 100 : 0,
            ...(reason === undefined ? {} : { reason }),
          }),
        ),
      fc
        .record({
          reachable: fc.boolean(),
          reason: fc.option(fc.string(), { nil: undefined }),
          httpStatus: fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }),
        })
        .map(({ reachable, reason, httpStatus }) =>
          probeResult({ reachable, httpStatus, ...(reason === undefined ? {} : { reason }) }),
        ),
    );
    fc.assert(
      fc.property(result, (r) => {
        const { message } = buildSignalV2(r, ctx);
        expect(signalMessageV2Schema.safeParse(message).success).toBe(true);
        // Only known values and fields: a reader reads it with nothing to count as unknown.
        expect(readMessage(Buffer.from(JSON.stringify(message)))).toEqual({
          ok: true,
          encoding: 'json',
          items: [{ kind: 'signal', index: 0, message }],
        });
        const success = r.kind === 'availability' ? r.reachable : r.outcome === 'correct' || r.outcome === 'wrong';
        if (success) expect(message.data).not.toHaveProperty('reason');
        if (message.data.reason !== undefined) expect(FAILURE_REASONS).toContain(message.data.reason);
      }),
    );
  });
});

describe('buildSignalV2 edges', () => {
  it('refuses what came from outside and does not fit the schema: a subject that is not a UAID, too many sources, an HTTP status out of range', () => {
    const bad = { ...agent, subject: 'not-a-uaid' };
    expect(() => buildSignalV2(evalResult({ agent: bad }), ctx)).toThrow();
    // Checked per agent, not only on its first signal's kind.
    expect(() => buildSignalV2(probeResult({ agent: bad }), ctx)).toThrow();
    expect(() => buildSignalV2(evalResult(), { ...ctx, sources: ['a', 'b', 'c', 'd', 'e'] })).toThrow();
    expect(() => buildSignalV2(probeResult({ httpStatus: 999 }), ctx)).toThrow();
    expect(buildSignalV2(probeResult({ agent: { ...agent } }), ctx).message.subject).toBe(agent.subject);
  });
});

describe('failureReason', () => {
  const probe = (reason: string, httpStatus?: number) =>
    failureReason(probeResult({ reachable: false, reason, httpStatus }));
  const failed = (outcome: 'timeout' | 'error' | 'upstream-error' | 'skipped', reason: string) =>
    failureReason(evalResult({ outcome, score: 0, answer: null, response: null, reason }));

  it.each([
    ['timeout: no answer within 5000 ms', undefined, 'timeout'],
    ['refused: connection refused', undefined, 'connect-refused'],
    ['refused: connection reset', undefined, 'connection-reset'],
    ['refused: host name not found', undefined, 'dns'],
    ['refused: DNS lookup failed', undefined, 'dns'],
    ['refused: TLS failure (ERR_TLS_CERT_ALTNAME_INVALID)', undefined, 'tls'],
    ['refused: host unreachable', undefined, 'unreachable'],
    ['server error', 500, 'http-5xx'],
    ['http-error: HTTP 503', 503, 'http-5xx'],
    ['HTML page instead of an API', 200, 'bad-body'],
    ['too-large: response body exceeds the 65536-byte cap', undefined, 'too-large'],
    ['no answer on the agent card paths in time', undefined, 'timeout'],
    ['account 0.0.5 has no HCS-11 profile (memo hcs-11:…)', undefined, 'no-endpoint'],
    ['inbound topic with a submit key (controlled access)', undefined, 'auth-required'],
    ['inbound topic 0.0.9 does not exist', undefined, 'unreachable'],
    [
      "HCS-10 agents need the runner's HCS-10 identity and a Hedera client (hcs25 identity create)",
      undefined,
      'unsupported-protocol',
    ],
    ['endpoint is not a valid URL', undefined, 'bad-endpoint'],
    ['something nobody foresaw', undefined, 'unreachable'],
  ])('probe %j (HTTP %s) → %s', (reason, status, expected) => {
    expect(probe(reason, status)).toBe(expected);
  });

  it.each([
    ['timeout', 'timeout: no answer within 30000 ms', 'timeout'],
    ['timeout', 'timeout: aborted by the caller', 'aborted'],
    ['upstream-error', 'http-error: HTTP 500', 'http-5xx'],
    ['upstream-error', 'http-error: HTTP 404', 'http-4xx'],
    ['upstream-error', 'rate-limited: HTTP 429: rate limited (after one retry)', 'rate-limited'],
    ['upstream-error', 'agent-error: task failed: boom', 'agent-error'],
    ['error', 'refused: connection refused (after one retry)', 'connect-refused'],
    ['error', 'protocol-error: chat completion: response is not JSON (text/html)', 'bad-body'],
    ['error', 'protocol-error: a2a agent has no endpoint', 'no-endpoint'],
    ['error', 'protocol-error: malformed HTTP response (HPE_INVALID_CHUNK_SIZE)', 'protocol-error'],
    [
      'error',
      'refused: refused to connect to x.local: it resolves to non-public address 127.0.0.1 (private endpoints are not allowed; see --allow-private-endpoints)',
      'private-address',
    ],
    ['skipped', 'auth-required: HTTP 401: the agent requires authentication', 'auth-required'],
    ['skipped', 'MCP has no chat operation', 'not-chat-capable'],
  ] as const)('%s eval %j → %s', (outcome, reason, expected) => {
    expect(failed(outcome, reason)).toBe(expected);
  });

  it('graded answers: correct and wrong carry no reason; unparseable keeps the grader code', () => {
    expect(failureReason(evalResult({ reason: 'answered on retry' }))).toBeUndefined();
    expect(failureReason(evalResult({ outcome: 'wrong', score: 0, reason: 'answered on retry' }))).toBeUndefined();
    expect(
      failureReason(evalResult({ outcome: 'unparseable', score: 0, reason: 'ambiguous; answered on retry' })),
    ).toBe('ambiguous');
    expect(failureReason(evalResult({ outcome: 'unparseable', score: 0, reason: 'get out' }))).toBe('no-answer');
  });

  it('successful probes never carry a reason, whatever text the transport gave (no "get", "agent", "public")', () => {
    for (const reason of [
      'agent card (v0.3)',
      'public inbound topic',
      'get /health 200',
      'mcp 2025-06-18 calc, 3 tools',
    ]) {
      expect(failureReason(probeResult({ reachable: true, reason }))).toBeUndefined();
      expect(buildSignalV2(probeResult({ reachable: true, reason }), ctx).message.data).not.toHaveProperty('reason');
    }
  });
});

describe('signalStatus', () => {
  it('maps eval outcomes as the reference does', () => {
    const expected = {
      correct: 'ok',
      wrong: 'ok',
      unparseable: 'ok',
      empty: 'ok',
      timeout: 'timeout',
      error: 'error',
      'upstream-error': 'error',
      skipped: 'missing',
    };
    for (const outcome of EVAL_OUTCOMES) expect(signalStatus(evalResult({ outcome }))).toBe(expected[outcome]);
  });
});

describe('responseHashV2', () => {
  const reply = fc.string({ maxLength: 40 });
  const key = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b));

  it('for any two runs, equal replies give different hashes, and no hash is the plain SHA-256 or an HMAC under another key', () => {
    fc.assert(
      fc.property(key, key, key, reply, (k1, k2, other, text) => {
        fc.pre(!k1.equals(k2) && !other.equals(k1));
        const h1 = responseHashV2(k1, 'simple-evals.a2a_math', agent.subject, text);
        const h2 = responseHashV2(k2, 'simple-evals.a2a_math', agent.subject, text);
        expect(h1).not.toBe(h2);
        const body = h1.slice('hs256:'.length);
        const sha = createHash('sha256').update(text).digest();
        expect([sha.toString('base64url'), sha.subarray(0, 16).toString('base64url')]).not.toContain(body);
        const input = `hcs-25/response/v2\nsimple-evals.a2a_math\n${agent.subject}\n${text}`;
        expect(createHmac('sha256', other).update(input).digest().subarray(0, 16).toString('base64url')).not.toBe(body);
        expect(responseHashV2(other, 'simple-evals.a2a_math', agent.subject, text)).not.toBe(h1);
      }),
    );
  });

  it('within one run, equal replies of two agents or two evals differ; the run key reproduces the hash', () => {
    const a = responseHashV2(RUN_KEY, 'simple-evals.a2a_math', agent.subject, '35');
    expect(responseHashV2(RUN_KEY, 'simple-evals.a2a_math', `${agent.subject}x`, '35')).not.toBe(a);
    expect(responseHashV2(RUN_KEY, 'simple-evals.a2a_science', agent.subject, '35')).not.toBe(a);
    expect(responseHashV2(Buffer.from(RUN_KEY), 'simple-evals.a2a_math', agent.subject, '35')).toBe(a);
    expect(a).toMatch(/^hs256:[A-Za-z0-9_-]{22}$/);
  });
});

describe('canonicalSignalId', () => {
  it('reads v1 ids as aliases of the catalog ids and leaves others alone', () => {
    expect(canonicalSignalId('simple-evals.math')).toBe('simple-evals.a2a_math');
    expect(canonicalSignalId('simple-evals.science')).toBe('simple-evals.a2a_science');
    expect(canonicalSignalId('availability.probe')).toBe('availability.probe');
    expect(canonicalSignalId('reputation.stars')).toBe('reputation.stars');
    expect(canonicalSignalId('constructor')).toBe('constructor');
  });
});
