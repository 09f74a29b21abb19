import type { Command } from 'commander';
import { quoteInput, redactKeyMaterial } from '../config/secret.js';
import { durationMs } from '../core/duration.js';
import { Hcs25Error, UsageError, errorMessage } from '../core/errors.js';
import { escapeTerminal, stringifyForTerminal, stringifyInPieces } from '../core/terminal.js';
import { EXIT_INTERRUPTED, EXIT_OK, exitCodeOf } from './exit-codes.js';

export { EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

/** Options every command inherits from the root program. */
export interface GlobalOptions {
  network?: string;
  json?: boolean;
  mirrorTimeout?: number;
  config?: string;
  dotenv?: string;
}

export function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions;
}

/*
 * Everything the CLI prints passes through these four: agent and registry text reaches no terminal raw (escape,
 * control and bidi characters are shown escaped), and nothing that looks like key material is printed at all.
 */

export function printJson(value: unknown): void {
  // Written a piece at a time: a whole report can be longer than a string may be.
  let text = '';
  for (const piece of stringifyInPieces(value, 2)) {
    text += piece;
    if (text.length >= 65_536) {
      process.stdout.write(text);
      text = '';
    }
  }
  process.stdout.write(`${text}\n`);
}

export function printLine(line = ''): void {
  process.stdout.write(`${escapeTerminal(line, { keepNewlines: true })}\n`);
}

/** Progress and notes go to stderr so stdout stays clean for pipes and --json. */
/** Tables fit the terminal they are shown on; written to a file or a pipe they keep every column whole. */
export function terminalWidth(): { width?: number } {
  return process.stdout.isTTY && process.stdout.columns ? { width: process.stdout.columns } : {};
}

export function note(line: string): void {
  process.stderr.write(`${escapeTerminal(redactKeyMaterial(line), { keepNewlines: true })}\n`);
}

/**
 * Wraps a command action: typed errors become one clear line on stderr (and a JSON error object with --json),
 * usage errors exit 2, everything else exits 1. Stack traces only with HCS25_DEBUG=1.
 */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<unknown>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const cmd = args[args.length - 1] as Command;
    try {
      const code = await fn(...args);
      process.exitCode = typeof code === 'number' ? code : EXIT_OK;
    } catch (err) {
      reportError(err, globals(cmd).json === true);
    }
  };
}

export function reportError(err: unknown, json: boolean): void {
  // One table maps error codes to exit codes: exit-codes.ts.
  const code = exitCodeOf(err);
  const hint = err instanceof Hcs25Error ? err.hint : undefined;
  if (json) {
    process.stdout.write(
      `${stringifyForTerminal({ error: { code: err instanceof Hcs25Error ? err.code : 'ERROR', message: redactKeyMaterial(errorMessage(err)), hint } })}\n`,
    );
  } else {
    process.stderr.write(
      `hcs25: ${escapeTerminal(redactKeyMaterial(errorMessage(err)))}${hint ? `\n  hint: ${escapeTerminal(hint)}` : ''}\n`,
    );
  }
  if (process.env.HCS25_DEBUG === '1' && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  process.exitCode = code;
}

/** Parses an integer flag value, or throws a UsageError naming the flag. */
export function intOption(name: string, min: number, max: number): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new UsageError(`${name} must be a whole number from ${min} to ${max}, got ${quoteInput(value)}`);
    }
    return n;
  };
}

export function numberOption(name: string, min: number, max: number): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max) {
      throw new UsageError(`${name} must be a number from ${min} to ${max}, got ${quoteInput(value)}`);
    }
    return n;
  };
}

/** The flags of asking HCS-10 agents, shared by the commands that publish (`run`, `watch`). */
export interface Hcs10Flags {
  hcs10BudgetMs?: number;
  allowTopicFees?: boolean;
  maxTopicFeeHbar?: number;
}

export function hcs10Options(cmd: Command): Command {
  return cmd
    .option(
      '--hcs10-budget-ms <ms>',
      'time budget per ask for HCS-10 agents (default 120000: each hop is a consensus transaction)',
      intOption('--hcs10-budget-ms', 1000, 600_000),
    )
    .option(
      '--allow-topic-fees',
      'pay HIP-991 fees of fee-gated HCS-10 inbound topics (default: such agents are skipped)',
    )
    .option(
      '--max-topic-fee-hbar <hbar>',
      'with --allow-topic-fees: the most one connection request may pay (default 0.5)',
      numberOption('--max-topic-fee-hbar', 0, 100),
    );
}

export function hcs10Parameters(flags: Hcs10Flags): {
  budgetMs?: number;
  topicFees?: { allow: boolean; maxHbar: number };
} {
  return {
    ...(flags.hcs10BudgetMs !== undefined && { budgetMs: flags.hcs10BudgetMs }),
    ...(flags.allowTopicFees && { topicFees: { allow: true, maxHbar: flags.maxTopicFeeHbar ?? 0.5 } }),
  };
}

export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * For long-running commands: resolves with the signal that asked them to stop (Ctrl-C or SIGTERM). Handlers are
 * installed at once (a supervisor may signal as soon as it sees output) and removed when one arrives.
 */
export function stopSignal(): { stopped: Promise<NodeJS.Signals>; dispose(): void } {
  let dispose = () => {};
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      dispose();
      resolve(signal);
    };
    dispose = () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  return { stopped, dispose };
}

/** Ctrl-C exits 130; SIGTERM is a requested, clean stop (0). */
export function exitCodeForStop(signal: NodeJS.Signals | undefined): number {
  return signal === 'SIGINT' ? EXIT_INTERRUPTED : EXIT_OK;
}

/** `90s`, `30m`, `24h`, `7d` (or plain milliseconds) → ms. */
export function parseDuration(flag: string, value: string): number {
  const ms = durationMs(value);
  if (ms === undefined)
    throw new UsageError(`${flag} must be a duration like 90s, 30m, 24h or 7d, got ${quoteInput(value)}`);
  return ms;
}
