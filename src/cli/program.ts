/**
 * The hcs25 command line. Kept thin and cheap to start: every command module imports its heavy
 * dependencies (the Hedera SDK, the standards-sdk, servers) inside its action, never at the top.
 */
import { Command, CommanderError, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { UsageError } from '../core/errors.js';
import { didYouMean } from '../core/suggest.js';
import { EXIT_USAGE } from './exit-codes.js';
import { intOption, reportError } from './shared.js';
import { register as demo } from './demo.js';
import { register as localNode } from './local-node.js';
import { register as topic } from './topic.js';
import { register as registry } from './registry.js';
import { register as discover } from './discover.js';
import { register as evalCmd } from './eval.js';
import { register as run } from './run.js';
import { register as signals } from './signals.js';
import { register as scores } from './scores.js';
import { register as reveal } from './reveal.js';
import { register as verify } from './verify.js';
import { register as grade } from './grade.js';
import { register as identity } from './identity.js';
import { register as agents } from './agents.js';
import { register as watch } from './watch.js';
import { register as serve } from './serve.js';

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Node 20 reads an `--env-file` argument itself, even after the script name (and exits with its own message when the
 * file is missing), so the CLI's option has another name; `--env-file` is refused with a pointer to it.
 */
const ENV_FILE_NOTE = '\n--dotenv, not --env-file: Node reads --env-file itself, even after the command name.';

function refuseEnvFile(): never {
  throw new UsageError('use --dotenv FILE to read environment variables from a file', {
    hint: 'Node reads --env-file itself (Node 20 even after the command name), so hcs25 does not take it',
  });
}

/** Every command, in the order `hcs25 --help` lists them. */
export const COMMANDS: readonly ((program: Command) => void)[] = [
  demo,
  localNode,
  topic,
  registry,
  discover,
  evalCmd,
  run,
  signals,
  scores,
  reveal,
  verify,
  grade,
  identity,
  agents,
  serve,
  watch,
];

/**
 * Commander guesses only near spellings of an unknown option; one cut short (`--max-fee` for `--max-fee-hbar`) gets a
 * guess too, among the options of the command it was given to (found by the command names in `argv`).
 */
function withOptionGuess(program: Command, argv: readonly string[], message: string): string {
  const unknown = /^error: unknown option '(--[^'=]+)/.exec(message)?.[1];
  if (!unknown || message.includes('Did you mean')) return message;
  const chain = [program];
  for (const arg of argv) {
    const sub = chain.at(-1)!.commands.find((c) => c.name() === arg);
    if (sub) chain.push(sub);
  }
  const longs = chain.flatMap((c) => c.options.flatMap((o) => (o.long && !o.hidden ? [o.long] : [])));
  const guess = didYouMean(unknown, longs);
  return guess ? `${message.trimEnd()}\n(${guess[0]!.toUpperCase()}${guess.slice(1)})\n` : message;
}

/** The root program with its global options and the given commands (all by default). */
export function buildProgram(
  commands: readonly ((program: Command) => void)[] = COMMANDS,
  argv: readonly string[] = [],
): Command {
  const program = new Command();
  program
    .name('hcs25')
    .description('HCS-25 trust signals for AI agents on the Hedera Consensus Service')
    .version(packageVersion(), '-V, --version')
    .option('-n, --network <name>', 'local | solo | testnet | previewnet | mainnet | custom (env HCS25_NETWORK)')
    .option('--json', 'machine-readable output on stdout')
    .option(
      '--mirror-timeout <ms>',
      'how long one mirror node request may take before it is retried (env HCS25_MIRROR_TIMEOUT_MS, default 10000)',
      intOption('--mirror-timeout', 100, 600_000),
    )
    .option('--config <file>', 'config file (JSON); env HCS25_CONFIG')
    .option('--dotenv <file>', 'read environment variables from this file (default: ./.env when present)')
    .addOption(new Option('--env-file <file>').hideHelp().argParser(refuseEnvFile))
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ outputError: (message, write) => write(withOptionGuess(program, argv, message)) })
    .addHelpText('after', ENV_FILE_NOTE)
    // Every subcommand's --help lists the global options too (--network, --json, --config, --dotenv).
    .configureHelp({ showGlobalOptions: true })
    .exitOverride();
  for (const register of commands) register(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram(COMMANDS, argv);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; every other commander error is a usage error.
      process.exitCode = err.exitCode === 0 ? 0 : EXIT_USAGE;
      return;
    }
    reportError(err, argv.includes('--json'));
  }
}
