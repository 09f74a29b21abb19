/**
 * Running hcs25 commands in-process against an emulator, configured through the environment as a user would:
 * a `custom` network pointing at the emulator's ephemeral ports, and output captured from stdout/stderr.
 */
import type { Command } from 'commander';
import { vi } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import type { LocalNode } from '../../src/localnode/index.js';

/** The environment a user sets to point hcs25 at `node` (a `custom` network, operator 0.0.2). */
export function emulatorEnv(node: LocalNode): Record<string, string> {
  return {
    HCS25_NETWORK: 'custom',
    HCS25_NODES: `127.0.0.1:${node.ports.consensus}=0.0.3`,
    HCS25_MIRROR_GRPC: `127.0.0.1:${node.ports.mirrorGrpc}`,
    HCS25_MIRROR_REST_URL: node.mirrorRestUrl,
    HCS25_OPERATOR_ID: node.operator.accountId,
    HCS25_OPERATOR_KEY: node.operator.privateKey,
  };
}

/**
 * Points the process environment at `node` (operator 0.0.2, state in `stateDir`, `extra` on top: e.g. the `local`
 * network, whose agents may be on private addresses); returns a function that restores it.
 */
export function useEmulatorEnv(node: LocalNode, stateDir: string, extra: Record<string, string> = {}): () => void {
  const saved = { ...process.env };
  Object.assign(process.env, { ...emulatorEnv(node), HCS25_STATE_DIR: stateDir, ...extra });
  return () => {
    process.env = saved;
  };
}

/** Runs `hcs25 <args>` with the given command modules registered; returns what it printed and its exit code. */
export async function runCli(
  commands: ((program: Command) => void)[],
  args: string[],
): Promise<{ stdout: string; stderr: string; code: number }> {
  const root = buildProgram(commands);
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  process.exitCode = 0;
  try {
    await root.parseAsync(['node', 'hcs25', ...args]);
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = 0;
  return { stdout, stderr, code };
}
