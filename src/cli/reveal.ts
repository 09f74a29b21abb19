import type { Command } from 'commander';
import { quoteInput } from '../config/secret.js';
import { UsageError } from '../core/errors.js';
import { RUN_ID_PATTERN } from '../core/ids.js';
import { entityIdFlag, withClient } from './context.js';
import { action, globals, note, printJson, printLine } from './shared.js';

interface RevealFlags {
  run: string;
  topic?: string;
  stateDir?: string;
  force?: boolean;
}

export function register(program: Command): void {
  program
    .command('reveal')
    .description('publish a run\'s question key (op "reveal") so anyone can audit its question hashes')
    .requiredOption('--run <run>', 'run id (printed by hcs25 run)')
    .option('--topic <id>', "topic to publish to (default: the run's signal topic)")
    .option('--state-dir <dir>', 'where run journals are kept (env HCS25_STATE_DIR; default .hcs25)')
    .option('--force', 'reveal although the run has not finished publishing')
    .action(
      action(async (flags: RevealFlags, cmd: Command) => {
        const g = globals(cmd);
        if (!RUN_ID_PATTERN.test(flags.run))
          throw new UsageError(`--run must be a run id (a 26-character ULID), got ${quoteInput(flags.run)}`, {
            hint: 'run ids are printed by `hcs25 run`',
          });
        if (flags.topic !== undefined) entityIdFlag('--topic', flags.topic);
        const { revealRun } = await import('../publish/reveal-run.js');
        const result = await withClient(cmd, { stateDir: flags.stateDir }, (client) =>
          revealRun(client, {
            run: flags.run,
            ...(flags.topic ? { topic: flags.topic } : {}),
            ...(flags.force ? { force: true } : {}),
          }),
        );
        if (g.json) {
          printJson(result);
          return;
        }
        printLine(`${result.topic} #${result.seq}`);
        note(
          result.already
            ? `run ${result.run}'s key was already revealed on ${result.topic} (sequence ${result.seq}); nothing sent`
            : `revealed the key of run ${result.run} on ${result.topic} (sequence ${result.seq}, transaction ${result.txId})`,
        );
      }),
    );
}
