// A throwaway PostgreSQL server for benchmarks (the tests' test/support/postgres.ts does the same for vitest):
// initdb into a temp dir, `postgres` on a free 127.0.0.1 port, one database `hcs25`, removed on stop. Under root
// (initdb refuses it) it runs as the `postgres` user. Returns null when no PostgreSQL binaries are installed.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function bin(name) {
  if (spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim()) return name;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  for (const v of readdirSync(root).sort((a, b) => Number(b) - Number(a))) if (existsSync(join(root, v, 'bin', name))) return join(root, v, 'bin', name);
  return null;
}

const asRoot = process.getuid?.() === 0;
const argv = (cmd, args) => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** `{ url, stop() }`, or null without PostgreSQL binaries. */
export async function startPostgres() {
  const initdb = bin('initdb');
  const postgres = bin('postgres');
  if (!initdb || !postgres) return null;
  const dir = mkdtempSync(join(tmpdir(), 'hcs25-bench-pg-'));
  const data = join(dir, 'data');
  if (asRoot) {
    chmodSync(dir, 0o755);
    const id = (flag) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, id('-u'), id('-g'));
  }
  const [ic, ia] = argv(initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const init = spawnSync(ic, ia, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.error?.message}`);
  const port = await freePort();
  const [cmd, args] = argv(postgres, ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'max_connections=100']);
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => (log = (log + d.toString()).slice(-4000)));
  const base = `postgres://postgres@127.0.0.1:${port}`;
  const pg = (await import('pg')).default;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const c = new pg.Client({ connectionString: `${base}/postgres` });
    try {
      await c.connect();
      await c.query('CREATE DATABASE hcs25');
      await c.end();
      break;
    } catch (err) {
      await c.end().catch(() => {});
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`postgres did not start: ${String(err)}\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url: `${base}/hcs25`,
    dir: data,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
