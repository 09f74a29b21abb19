/** ownBytes: a message's bytes in an ArrayBuffer of their own size, so holding or posting it costs only them. */
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ownBytes } from '../../src/core/bytes.js';

describe('ownBytes', () => {
  it('copies a window on a larger ArrayBuffer (the pool, a zlib chunk) into one of exactly its size', () => {
    for (const view of [Buffer.from('{"p":"hcs-25"}'), deflateSync(Buffer.from('x'.repeat(2_000)))]) {
      expect(view.buffer.byteLength).toBeGreaterThan(view.length);
      const own = ownBytes(view);
      expect(own.equals(view)).toBe(true);
      expect(own.byteOffset).toBe(0);
      expect(own.buffer.byteLength).toBe(view.length);
    }
  });

  it('returns a Buffer that already owns its ArrayBuffer as it is, and copies a plain Uint8Array window', () => {
    const exact = Buffer.allocUnsafeSlow(5).fill(7);
    expect(ownBytes(exact)).toBe(exact);
    const window = new Uint8Array(new ArrayBuffer(64), 8, 4).fill(3);
    const own = ownBytes(window);
    expect([...own]).toEqual([3, 3, 3, 3]);
    expect(own.buffer.byteLength).toBe(4);
  });

  it('an empty view', () => {
    expect(ownBytes(Buffer.alloc(0)).length).toBe(0);
  });
});
