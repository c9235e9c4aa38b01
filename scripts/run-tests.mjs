// Runs the test suite with node's own test runner: every test/**/*.test.ts, or the files and
// folders given as arguments. (Node 20's --test does not expand globs itself.)
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(path) {
  if (statSync(path).isFile()) return path.endsWith('.test.ts') ? [path] : [];
  return readdirSync(path).sort().flatMap((name) => collect(join(path, name)));
}

const targets = process.argv.slice(2);
const files = (targets.length ? targets : ['test']).flatMap(collect);
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
if (!process.env.TEST_DATABASE_URL) {
  console.warn('note: TEST_DATABASE_URL is not set: database tests run against SQLite only (.ci/run sets it)');
}
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
