import type { Command } from 'commander';
import { NotImplementedError } from '../errors.js';
import { action } from './shared.js';

export function register(program: Command): void {
  program
    .command('signals')
    .description('read and validate signals from the mirror node (not built yet)')
    .allowUnknownOption()
    .action(
      action(async () => {
        throw new NotImplementedError('hcs25 signals');
      }),
    );
}
