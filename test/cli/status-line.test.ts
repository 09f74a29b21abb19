/** `hcs25 watch`'s status line: real control codes on a terminal, only between escaped texts; none off a terminal. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StatusLine } from '../../src/cli/status-line.js';

afterEach(() => vi.restoreAllMocks());

function capture(tty: boolean) {
  const writes: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    writes.push(String(chunk));
    return true;
  });
  const out = { write: (text: string) => process.stderr.write(text), columns: 60 };
  return { status: new StatusLine(out, tty), writes };
}

describe('StatusLine', () => {
  it('on a terminal: redraws in place, clears the line before a note with the real sequence, escapes the texts', () => {
    const { status, writes } = capture(true);
    status.draw('watch running · 3 agents');
    status.note('agent said \x1b[31mred\x1b[0m');
    status.draw('watch running · 4 agents');
    status.end();
    expect(writes).toEqual([
      '\rwatch running · 3 agents\x1b[K',
      '\r\x1b[K',
      'agent said \\x1b[31mred\\x1b[0m\n',
      '\rwatch running · 4 agents\x1b[K',
      '\n',
    ]);
    // The clearing sequence is never printed as text.
    expect(writes.join('')).not.toContain('\\x0d');
  });

  it('cuts a long status to the terminal width', () => {
    const { status, writes } = capture(true);
    status.draw('x'.repeat(200));
    expect(writes[0]).toBe(`\r${'x'.repeat(59)}\x1b[K`);
  });

  it('off a terminal: one timestamped line per draw, notes as they are, no control codes', () => {
    const { status, writes } = capture(false);
    status.draw('watch running', new Date('2026-11-28T12:00:00.000Z'));
    status.note('a note');
    status.end();
    expect(writes).toEqual(['2026-11-28T12:00:00.000Z watch running\n', 'a note\n']);
  });
});
