/**
 * The README's and docs/*.md's shell blocks are executed, in order (README first, then docs/ by name), in one shell,
 * as a user would type them: `hcs25` is bin/hcs25 on PATH and the environment points at an embedded local node (the
 * one thing a user's machine would provide: a node), with a sample agent behind the README's `agent.json`. Blocks that
 * call npm (quick start, development) are what CI itself runs; for those the test checks that every npm script they
 * name exists. Commands shown but not run (long-running ones in `console` blocks, inline examples, tables) are checked
 * against the CLI itself: each names a real command and only flags that command takes.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli/program.js';
import { startAgentFleet, type AgentFleet } from '../src/devtools/agents/index.js';
import { startLocalNode, type LocalNode } from '../src/localnode/index.js';
import { emulatorEnv } from './support/cli.js';

const root = resolve(import.meta.dirname, '..');
const docs = readdirSync(join(root, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .sort()
  .map((f) => `docs/${f}`);
const pages = ['README.md', ...docs].map((path) => ({ path, text: readFileSync(join(root, path), 'utf8') }));

type Block = { page: string; lang: string; body: string };
const blocks: Block[] = pages.flatMap(({ path, text }) =>
  [...text.matchAll(/^( *)```(\w*)\n([\s\S]*?)^\1```/gm)].map((m) => ({
    page: path,
    lang: m[2]!,
    body: m[3]!
      .split('\n')
      .map((l) => l.slice(m[1]!.length))
      .join('\n'),
  })),
);
const shell = blocks.filter((b) => b.lang === 'sh');
const npmBlocks = shell.filter((b) => /^\s*npm /m.test(b.body));
const runnable = shell.filter((b) => !npmBlocks.includes(b));

/** Every `hcs25 …` command a page shows: in code blocks (continuation lines joined) and as inline code. */
function shownCommands(): { page: string; words: string[] }[] {
  const found: { page: string; words: string[] }[] = [];
  const add = (page: string, command: string) => {
    const words = (command.match(/"[^"]*"|'[^']*'|\S+/g) ?? [])
      .map((w) => w.replace(/^\[+|[\]…,.]+$/g, ''))
      .filter(Boolean);
    if (words.length > 0) found.push({ page, words });
  };
  for (const b of blocks.filter((b) => ['sh', 'console', ''].includes(b.lang))) {
    for (const line of b.body.replace(/\\\n\s*/g, ' ').split('\n')) {
      const code = line.replace(/(^|\s)#.*$/, '');
      for (const m of code.matchAll(/(?:^|[\s($;&|])hcs25(?=\s|$)((?:\s+[^\s|;&)]+)*)/g)) add(b.page, m[1]!);
    }
  }
  for (const { path, text } of pages) {
    const prose = text.replace(/^( *)```\w*\n[\s\S]*?^\1```/gm, '');
    for (const m of prose.matchAll(/`hcs25((?: [^`]*)?)`/g)) add(path, m[1]!);
  }
  return found;
}

/** `npm run demo -- …` as shown: the demo command's flags. */
function shownDemoFlags(): { page: string; words: string[] }[] {
  return pages.flatMap(({ path, text }) =>
    [...text.matchAll(/npm run demo -- ([^`\n#]*)/g)].map((m) => ({
      page: path,
      words: ['demo', ...m[1]!.trim().split(/\s+/)],
    })),
  );
}

/** The command `words` names, and the flags it and its parents accept; undefined when a word names no command. */
function resolveCommand(program: Command, words: string[]): { command: Command; flags: Set<string> } {
  let command = program;
  let i = 0;
  for (; i < words.length; i++) {
    const sub = command.commands.find((c) => c.name() === words[i] || c.aliases().includes(words[i]!));
    if (!sub) break;
    command = sub;
  }
  const flags = new Set(['--help', '-h', '--version', '-V']);
  for (let c: Command | null = command; c; c = c.parent) {
    for (const o of c.options) {
      if (o.long) flags.add(o.long);
      if (o.short) flags.add(o.short);
    }
  }
  return { command, flags };
}

let node: LocalNode;
let fleet: AgentFleet;
const cwd = mkdtempSync(join(tmpdir(), 'hcs25-readme-'));

beforeAll(async () => {
  node = await startLocalNode({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 }, quiet: true });
  fleet = await startAgentFleet({ include: ['perfect'] });
});
afterAll(async () => {
  await fleet?.stop();
  await node?.stop();
  rmSync(cwd, { recursive: true, force: true });
});

describe('README and docs', () => {
  it('have shell blocks to run, and their npm blocks name scripts that exist', () => {
    expect(runnable.filter((b) => b.page === 'README.md').length).toBeGreaterThanOrEqual(4);
    const scripts = Object.keys(
      (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts,
    );
    for (const block of npmBlocks) {
      for (const [, name] of block.body.matchAll(/npm run (\w+)/g))
        expect(scripts, `${block.page}: npm run ${name}`).toContain(name);
      // `npm link` is shown, not run: test/cli/package.test.ts installs the package as users do.
      for (const line of block.body.split('\n').filter((l) => l.trim()))
        expect(line, block.page).toMatch(/^npm (ci|test|link|run \w+)\b/);
    }
    for (const { path, text } of pages) {
      for (const [, name] of text.matchAll(/`npm run (\w+)/g))
        expect(scripts, `${path}: npm run ${name}`).toContain(name);
    }
  });

  it('every hcs25 command shown names a real command and only flags it takes', () => {
    const program = buildProgram();
    const shown = [...shownCommands(), ...shownDemoFlags()];
    // The README alone shows most commands; a page that shows none would mean the extraction broke.
    expect(shown.filter((s) => s.page === 'README.md').length).toBeGreaterThan(30);
    const wrong: string[] = [];
    for (const { page, words } of shown) {
      if (words[0]?.startsWith('<')) continue; // `hcs25 <command> --help`: a placeholder, not a command
      const { command, flags } = resolveCommand(program, words);
      const subcommands = command.commands.map((c) => c.name());
      if (subcommands.length > 0 && !words.some((w) => w === '--help')) {
        wrong.push(`${page}: hcs25 ${words.join(' ')} (names no command: ${subcommands.join(', ')})`);
      }
      for (const word of words.filter((w) => /^--?[a-zA-Z]/.test(w))) {
        const flag = word.split('=')[0]!;
        if (!flags.has(flag)) wrong.push(`${page}: hcs25 ${words.join(' ')} (${flag} is no flag of ${command.name()})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('link only to files that exist', () => {
    const missing: string[] = [];
    for (const { path, text } of pages) {
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        if (!existsSync(resolve(root, dirname(path), target!))) missing.push(`${path}: ${target}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every shell block works as written against a local node', async () => {
    // agent.json as the README shows it, pointed at a live sample agent.
    const record = JSON.parse(blocks.find((b) => b.lang === 'json' && b.body.includes('"protocol"'))!.body) as Record<
      string,
      string
    >;
    const perfect = fleet.agents[0]!;
    writeFileSync(
      join(cwd, 'agent.json'),
      JSON.stringify({ ...record, endpoint: 'endpoint' in perfect ? perfect.endpoint : '', model: 'sample-perfect' }),
    );
    const bin = join(cwd, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'hcs25'), `#!/bin/sh\nexec ${JSON.stringify(join(root, 'bin/hcs25'))} "$@"\n`, {
      mode: 0o755,
    });
    const script = ['set -eu', ...runnable.map((b) => b.body)].join('\n');
    const env = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      ...emulatorEnv(node),
      HCS25_ALLOW_PRIVATE_ENDPOINTS: 'true',
      HCS25_BUDGET_MS: '5000',
    };
    const r = await promisify(execFile)('bash', ['-c', script], { cwd, env, timeout: 240_000 }).catch(
      (err: { stdout: string; stderr: string; code: number }) => err,
    );
    expect((r as { code?: number }).code ?? 0, `${r.stderr}`).toBe(0);
    expect(existsSync(join(cwd, 'report.html'))).toBe(true);
    // The README's last block revealed the run and verified it: signals re-derived, nothing mismatched or equivocated.
    expect(r.stdout).toMatch(
      /: \d+ signal\(s\): [1-9]\d* re-derived, \d+ commitment-checked, \d+ not-checkable, 0 mismatch, 0 equivocation/,
    );
    // Every command in turn (runs, a reveal, scores…): the whole walk may take minutes on a loaded machine.
  }, 240_000);
});
