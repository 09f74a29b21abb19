import { describe, expect, it } from 'vitest';
import { buildSignalMessage, parseSignalMessage } from '../../src/format/index.js';
import { RUN, RUN_KEY, evalResult } from './fixtures.js';

const good = buildSignalMessage(evalResult(), { run: RUN, runKey: RUN_KEY });
const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64');

describe('parseSignalMessage', () => {
  it('accepts a built message from a mirror-node base64 body', () => {
    expect(parseSignalMessage(Buffer.from(good.json).toString('base64'))).toEqual({ ok: true, message: good.message });
  });

  it('accepts bytes and utf8 text', () => {
    expect(parseSignalMessage(Buffer.from(good.json)).ok).toBe(true);
    expect(parseSignalMessage(good.json, { encoding: 'utf8' }).ok).toBe(true);
  });

  it.each([
    ['bad-json', b64('not json {')],
    ['not-hcs25', b64({ p: 'hcs-2', op: 'register' })],
    ['not-hcs25', b64('[1,2]')],
    ['not-hcs25', b64('null')],
    ['unknown-version', b64({ ...good.message, v: 2 })],
    ['unknown-op', b64({ ...good.message, op: 'vote' })],
    ['schema', b64({ ...good.message, status: 'great' })],
    ['schema', b64({ ...good.message, subject: 'calc-bot' })],
    ['schema', b64({ ...good.message, signal: 'simple-evals.poetry' })],
    ['schema', b64({ ...good.message, extra: 1 })],
    ['schema', b64({ ...good.message, data: { ...(good.message.data as object), answer: 'x'.repeat(17) } })],
    ['schema', b64({ ...good.message, data: { ...(good.message.data as object), questionHash: 'math:add:37+58' } })],
    ['schema', b64({ ...good.message, data: { ...(good.message.data as object), score: 55 } })],
    ['schema', b64({ ...good.message, fetchedAt: 'yesterday' })],
    ['too-large', b64({ ...good.message, pad: 'x'.repeat(1100) })],
    ['not-utf8', Buffer.from([0xff, 0xfe, 0x7b]).toString('base64')],
  ])('rejects with reason %s', (reason, body) => {
    const r = parseSignalMessage(body);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.reason).toBe(reason);
      expect(r.detail.length).toBeGreaterThan(0);
    }
  });

  it('names the offending field for schema mismatches', () => {
    const r = parseSignalMessage(b64({ ...good.message, data: { ...(good.message.data as object), score: 55 } }));
    expect(!r.ok && r.detail).toMatch(/data\.score/);
  });

  it('never throws on random bytes', () => {
    for (let i = 0; i < 2000; i++) {
      const bytes = Buffer.from(Array.from({ length: (i % 64) + 1 }, (_, j) => (i * 31 + j * 17) % 256));
      expect(() => parseSignalMessage(bytes)).not.toThrow();
    }
  });
});
