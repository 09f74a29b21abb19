import type { Command } from 'commander';
import { NotImplementedError } from '../errors.js';
import { action } from './shared.js';

export function register(program: Command): void {
  program
    .command('local-node')
    .description('run the embedded Hedera local-node emulator in the foreground (not built yet)')
    .allowUnknownOption()
    .action(
      action(async () => {
        throw new NotImplementedError('hcs25 local-node');
      }),
    );
}
