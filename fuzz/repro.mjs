#!/usr/bin/env node
/**
 * Runs one fuzz target on input files, without the fuzzer: how a finding is reproduced and
 * debugged (full stack trace, timing). Uses the transpiled tree of the last `npm run fuzz`.
 *
 *   node fuzz/repro.mjs deb-reader .tmp/fuzz/deb-reader/artifacts/crash-…
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const [name, ...files] = process.argv.slice(2);
if (!name || files.length === 0) {
  console.error('usage: node fuzz/repro.mjs <target> <input>...');
  process.exit(2);
}
const { fuzz } = await import(pathToFileURL(join(ROOT, '.tmp', 'fuzz', 'build', 'fuzz', 'targets', `${name}.js`)).href);
let failed = 0;
for (const file of files) {
  const started = process.hrtime.bigint();
  try {
    await fuzz(readFileSync(file));
    console.log(`${file}: ok (${Number(process.hrtime.bigint() - started) / 1e6} ms)`);
  } catch (error) {
    failed += 1;
    console.log(`${file}: FAILS after ${Number(process.hrtime.bigint() - started) / 1e6} ms`);
    console.log(error);
  }
}
process.exitCode = failed ? 1 : 0;
