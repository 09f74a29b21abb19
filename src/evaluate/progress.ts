/** Counts of a run in flight, reported by the runner after every start and finish. */
export interface Progress {
  total: number;
  done: number;
  running: number;
  /** Correct answers and reachable probes. */
  correct: number;
  /** Answers that were graded and not correct (wrong, unparseable, empty). */
  wrong: number;
  /** No gradable answer: timeout, error, upstream-error, unreachable probe. */
  failed: number;
  /** MCP and auth-required agents, and protocols without a transport. */
  skipped: number;
}

export function emptyProgress(total: number): Progress {
  return { total, done: 0, running: 0, correct: 0, wrong: 0, failed: 0, skipped: 0 };
}

const WIDTH = 24;
const MIN_INTERVAL_MS = 100;

export function renderProgress(p: Progress): string {
  const filled = p.total === 0 ? WIDTH : Math.round((p.done / p.total) * WIDTH);
  const bar = `${'█'.repeat(filled)}${'░'.repeat(WIDTH - filled)}`;
  const parts = [`correct ${p.correct}`, `wrong ${p.wrong}`, `failed ${p.failed}`];
  if (p.skipped > 0) parts.push(`skipped ${p.skipped}`);
  return `[${bar}] ${p.done}/${p.total}  ${parts.join('  ')}${p.running > 0 ? `  (${p.running} running)` : ''}`;
}

/**
 * A one-line progress bar for a TTY (stderr), redrawn at most 10 times a second. The CLI turns it on only when
 * stderr is a TTY and `--json` is off; pipes and logs get nothing.
 */
export function createProgressBar(stream: NodeJS.WriteStream): { update(p: Progress): void; finish(): void } {
  let last = 0;
  let latest: Progress | undefined;
  let drawn = false;
  const draw = () => {
    if (!latest) return;
    stream.write(`\r${renderProgress(latest)}\x1b[K`);
    drawn = true;
    last = Date.now();
  };
  return {
    update(p) {
      latest = { ...p };
      if (Date.now() - last >= MIN_INTERVAL_MS || p.done === p.total) draw();
    },
    finish() {
      draw();
      if (drawn) stream.write('\n');
    },
  };
}
