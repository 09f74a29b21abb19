/**
 * `hcs25 watch`'s status on stderr: redrawn in place on a terminal, one timestamped line per period otherwise. The
 * terminal's own control sequences are written as such; every text (status, notes) is escaped like all output.
 */
import { escapeTerminal } from '../core/terminal.js';
import { note } from './shared.js';

const CLEAR_LINE = '\r\x1b[K';

export class StatusLine {
  private drawn = false;

  constructor(
    private readonly out: { write(text: string): unknown; columns?: number },
    private readonly tty: boolean,
  ) {}

  draw(line: string, now = new Date()): void {
    const text = escapeTerminal(line);
    if (this.tty) this.out.write(`\r${text.slice(0, Math.max(20, (this.out.columns ?? 120) - 1))}\x1b[K`);
    else this.out.write(`${now.toISOString()} ${text}\n`);
    this.drawn = true;
  }

  /** A note between redraws: on a terminal the status line is cleared first, so the note starts a line of its own. */
  note(line: string): void {
    if (this.tty && this.drawn) this.out.write(CLEAR_LINE);
    note(line);
  }

  /** Leaves the last status line on screen. */
  end(): void {
    if (this.tty && this.drawn) this.out.write('\n');
  }
}
