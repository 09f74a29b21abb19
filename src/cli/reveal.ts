import type { Command } from 'commander';
import { NotImplementedError } from '../errors.js';
import { action } from './shared.js';

export function register(program: Command): void {
  program
    .command('reveal')
    .description("publish a run's question key (not built yet)")
    .allowUnknownOption()
    .action(
      action(async () => {
        throw new NotImplementedError('hcs25 reveal');
      }),
    );
}
