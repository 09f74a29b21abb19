#!/usr/bin/env node
/**
 * The hcs25 command line (bin). The program itself lives in program.ts, so that importing it runs nothing.
 */
import { main } from './program.js';

/**
 * Every command has finished when its action resolves (the long-running ones wait for SIGINT inside it). The Hedera
 * SDK leaves per-request deadline timers behind that would hold Node open for seconds more, so exit explicitly —
 * after stdout and stderr have flushed (pipes are asynchronous on some platforms).
 */
function exitWhenFlushed(): void {
  const code = typeof process.exitCode === 'number' ? process.exitCode : 0;
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

await main(process.argv);
exitWhenFlushed();
