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
// Two test files at a time (TEST_CONCURRENCY to change it): most of the suite's time is spent
// waiting on the programs it drives (clamd, slapd, apt-get, dnf, Chromium, the service itself),
// so two side by side take ~7.5 minutes where one at a time (Node's default on 2 cores) took ~20.
// Each file has its own temp folders, databases, ports and built client (test/helpers/cli-build.ts).
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
