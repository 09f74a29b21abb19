import type { Command } from 'commander';
import { NotImplementedError } from '../errors.js';
import { action } from './shared.js';

export function register(program: Command): void {
  program
    .command('eval')
    .description('evaluate one agent and print the results (publishes nothing) (not built yet)')
    .allowUnknownOption()
    .action(
      action(async () => {
        throw new NotImplementedError('hcs25 eval');
      }),
    );
}
