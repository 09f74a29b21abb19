// Builds dist/ only when a source is newer than the last build, so `npm run demo` starts at once the second time.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const stamp = join(root, 'dist/cli/main.js');

function newest(path) {
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

let built = 0;
try {
  built = statSync(stamp).mtimeMs;
} catch {
  // never built
}
const sources = Math.max(
  newest(join(root, 'src')),
  ...['package.json', 'tsconfig.json', 'tsconfig.build.json'].map((f) => newest(join(root, f))),
);
if (sources > built) {
  execFileSync(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')],
    { stdio: 'inherit' },
  );
}
