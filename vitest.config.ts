import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Files that bind the emulator's standard ports (50211/5600/5551, and 51211/52211 for more nodes). They run one at a
 * time, after the rest; every other file uses ephemeral ports and runs in parallel.
 */
const FIXED_PORTS = ['test/localnode/standard-ports.test.ts', 'test/publish/failover.test.ts'];

/**
 * Most of a file's time is spent waiting (on sockets, child processes, budgets running out), not on the CPU, so more
 * files run at once than there are cores. VITEST_MAX_WORKERS overrides it.
 */
const PARALLEL_WORKERS = 4;

/**
 * Files that replace a module (`vi.mock`) need a module registry of their own. Every other file shares its worker's
 * modules with the files before it (`isolate: false`): loading the Hedera SDK and the sources again for each file took
 * more CPU than some files' tests. So a test file restores what it changes in the process (its environment, handlers).
 */
const OWN_MODULES = ['test/publish/create-topic.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...FIXED_PORTS, ...OWN_MODULES],
          maxWorkers: PARALLEL_WORKERS,
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'own-modules', include: OWN_MODULES, maxWorkers: PARALLEL_WORKERS, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'fixed-ports',
          include: FIXED_PORTS,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
