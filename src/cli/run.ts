import type { Command } from 'commander';
import { NotImplementedError } from '../errors.js';
import { action } from './shared.js';

export function register(program: Command): void {
  program
    .command('run')
    .description('discover, evaluate and publish signals (not built yet)')
    .allowUnknownOption()
    .action(
      action(async () => {
        throw new NotImplementedError('hcs25 run');
      }),
    );
}
