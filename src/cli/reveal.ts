import type { Command } from 'commander';
import { withClient } from './context.js';
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
    .description("publish a run's question key (op \"reveal\") so anyone can audit its question hashes")
    .requiredOption('--run <run>', 'run id (printed by hcs25 run)')
    .option('--topic <id>', "topic to publish to (default: the run's signal topic)")
    .option('--state-dir <dir>', 'where run journals are kept (env HCS25_STATE_DIR; default .hcs25)')
    .option('--force', 'reveal although the run has not finished publishing')
    .action(
      action(async (flags: RevealFlags, cmd: Command) => {
        const g = globals(cmd);
        const { revealRun } = await import('../actions/reveal-run.js');
        const result = await withClient(cmd, { stateDir: flags.stateDir }, (client) =>
          revealRun(client, { run: flags.run, ...(flags.topic ? { topic: flags.topic } : {}), ...(flags.force ? { force: true } : {}) }),
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
