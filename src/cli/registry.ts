import type { Command } from 'commander';
import { NotImplementedError } from '../errors.js';
import { action } from './shared.js';

export function register(program: Command): void {
  program
    .command('registry')
    .description('create an HCS-2 or HCS-10 registry topic and register agents (not built yet)')
    .allowUnknownOption()
    .action(
      action(async () => {
        throw new NotImplementedError('hcs25 registry');
      }),
    );
}
