import { describe, expect, it } from 'vitest';
import { ERROR_CODES, Hcs25Error, UsageError, walk } from '../../src/core/errors.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';

describe('Hcs25Error', () => {
  it('carries a code, a short message, a hint, details from its cause and a docs path', () => {
    const cause = new Error('ECONNREFUSED 127.0.0.1:5551');
    const err = new Hcs25Error('MIRROR_UNAVAILABLE', 'mirror node request failed', { cause, hint: 'check the URL' });
    expect(err.message).toBe('mirror node request failed');
    expect(err.code).toBe('MIRROR_UNAVAILABLE');
    expect(err.hint).toBe('check the URL');
    expect(err.details).toBe('ECONNREFUSED 127.0.0.1:5551');
    expect(err.cause).toBe(cause);
    expect(new UsageError('bad flag').docsPath).toBe('README.md#commands');
    expect(new Hcs25Error('CONFIG', 'x', { docsPath: 'docs/serve.md' }).docsPath).toBe('docs/serve.md');
  });

  it('walks the cause chain: to the deepest error, or to the first that matches', () => {
    const root = new TypeError('root');
    const middle = new Hcs25Error('JOURNAL', 'middle', { cause: root });
    const top = new UsageError('top', { cause: middle });
    expect(top.walk()).toBe(root);
    expect(top.walk((e) => e instanceof Hcs25Error && e.code === 'JOURNAL')).toBe(middle);
    expect(walk(top, (e) => e instanceof RangeError)).toBeNull();
    expect(top.details).toBe('root');
  });

  it('stops on a cause cycle', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(walk(a)).toBe(b);
  });
});

describe('exitCodeOf', () => {
  it('maps usage and configuration errors to 2, an interruption to 130, everything else to 1', () => {
    expect(exitCodeOf(new UsageError('x'))).toBe(2);
    expect(exitCodeOf(new Hcs25Error('CONFIG', 'x'))).toBe(2);
    expect(exitCodeOf(new Hcs25Error('TOPIC_DELETED', 'x'))).toBe(2);
    expect(exitCodeOf(new Hcs25Error('INTERRUPTED', 'x'))).toBe(130);
    expect(exitCodeOf(new Hcs25Error('SUBMIT_INVALID_SIGNATURE', 'x'))).toBe(1);
    expect(exitCodeOf(new Hcs25Error('MIRROR_UNAVAILABLE', 'x'))).toBe(1);
    expect(exitCodeOf(new Error('x'))).toBe(1);
    expect(exitCodeOf('x')).toBe(1);
  });

  it('gives every code an exit code of 0-255', () => {
    for (const code of ERROR_CODES) {
      const exit = exitCodeOf(new Hcs25Error(code, 'x'));
      expect(exit).toBeGreaterThan(0);
      expect(exit).toBeLessThan(256);
    }
  });
});
