import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

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
 * The files that take longest, started first: a clean checkout (CI) has no timings from an earlier run, and vitest then
 * starts the largest files first, which can leave one of these to run alone at the end.
 */
const LONGEST = [
  'test/cli/serve.test.ts',
  'test/watch/watch-registry.test.ts',
  'test/cli/package.test.ts',
  'test/readme.test.ts',
  'test/publish/run-signals.test.ts',
  'test/cli/watch.test.ts',
  'test/cli/cli.test.ts',
  'test/cli/publish.test.ts',
  'test/serve/crash.test.ts',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONGEST.findIndex((path) => f.moduleId.endsWith(path));
      return i < 0 ? LONGEST.length : i;
    };
    const group = (f: TestSpecification) => f.project.config.sequence.groupOrder;
    // Array.prototype.sort is stable: within a rank, the order vitest chose stays.
    return (await super.sort(files)).sort((a, b) => group(a) - group(b) || rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...FIXED_PORTS],
          maxWorkers: PARALLEL_WORKERS,
          sequence: { groupOrder: 0 },
        },
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
