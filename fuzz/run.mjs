#!/usr/bin/env node
/**
 * Runs the Jazzer.js fuzz targets of fuzz/targets, one libFuzzer process per target, and prints
 * per target: executions, coverage (edges and features), corpus size, peak memory and findings.
 *
 *   npm run fuzz                                  # every target, 60 s each
 *   npm run fuzz -- --seconds 600 deb-reader      # one target for ten minutes
 *   npm run fuzz -- --seconds 30 --jobs 2         # two processes at a time (what CI does)
 *   npm run fuzz -- --runs 1000000 --seconds 7200 deb-reader   # a million inputs (2 h at most)
 *   npm run fuzz -- --replay                      # only the corpus, once (regression)
 *
 * Each target starts from its seeds (fuzz/corpus/<name>/, committed) and the inputs earlier runs
 * found (.tmp/fuzz/<name>/corpus/, kept between runs unless --fresh). A finding (an exception
 * other than the parser's typed error, an input running over 1 s, memory over the limits) stops
 * that target and leaves the input in .tmp/fuzz/<name>/artifacts/; the exit status is then 1.
 *
 * The TypeScript sources are transpiled (type-only, file by file: the project builds with
 * isolatedModules) into .tmp/fuzz/build/, and Jazzer.js instruments only the parser code there
 * (not node_modules, not the targets), so the coverage figures are those of src/.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { TARGETS } from './targets.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const WORK = join(ROOT, '.tmp', 'fuzz');
const BUILD = join(WORK, 'build');
const require = createRequire(import.meta.url);

/**
 * libFuzzer's process-wide memory limit, against leaks: the per-input guard (fuzz/lib/harness.ts)
 * checks the 256 MB an input may use. The instrumented Node process holds 150-200 MB before the
 * first input (Babel in the main and loader threads, V8, libFuzzer), and its resident memory
 * creeps up over a run without a leak: rpm-reader reached 514 MB after 15,500 inputs while the
 * same inputs replayed 40 times in a plain process kept 8 MB of heap, 28 descriptors and 165-192 MB
 * resident (allocator fragmentation from liblzma's dictionaries and libFuzzer's growing corpus).
 */
const RSS_LIMIT_MB = 1024;
/** A single input running longer than this is a finding. */
const TIMEOUT_SECONDS = 1;

function parseArgs(argv) {
  const options = { seconds: 60, jobs: 1, replay: false, fresh: false, json: null, names: [] };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--seconds') options.seconds = Number(value());
    else if (arg === '--runs') options.runs = Number(value());
    else if (arg === '--jobs') options.jobs = Number(value());
    else if (arg === '--json') options.json = value();
    else if (arg === '--replay') options.replay = true;
    else if (arg === '--fresh') options.fresh = true;
    else if (arg === '--list') options.list = true;
    else if (arg.startsWith('-')) throw new Error(`unknown option ${arg}`);
    else options.names.push(arg);
  }
  if (!(options.seconds > 0) || !Number.isInteger(options.jobs) || options.jobs < 1) throw new Error('--seconds and --jobs must be positive');
  if (options.runs !== undefined && !(Number.isInteger(options.runs) && options.runs > 0)) throw new Error('--runs must be a positive integer');
  for (const name of options.names) if (!TARGETS[name]) throw new Error(`unknown target ${name} (have: ${Object.keys(TARGETS).join(', ')})`);
  return options;
}

/** Transpiles every .ts under `from` into `to` (same layout, .js), skipping up-to-date files. */
function transpileTree(from, to) {
  let count = 0;
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    if (entry.isDirectory()) {
      count += transpileTree(source, join(to, entry.name));
      continue;
    }
    if (!entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue;
    const output = join(to, entry.name.replace(/\.ts$/, '.js'));
    if (existsSync(output) && statSync(output).mtimeMs >= statSync(source).mtimeMs) continue;
    const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
      fileName: source,
      compilerOptions: {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        verbatimModuleSyntax: true,
        inlineSourceMap: true,
        inlineSources: true,
      },
    });
    mkdirSync(to, { recursive: true });
    writeFileSync(output, outputText);
    count += 1;
  }
  return count;
}

function build() {
  const started = Date.now();
  const count = transpileTree(join(ROOT, 'src'), join(BUILD, 'src')) + transpileTree(join(ROOT, 'fuzz'), join(BUILD, 'fuzz'));
  if (count > 0) console.error(`fuzz: transpiled ${count} files in ${Date.now() - started} ms`);
}

/** What libFuzzer printed, read back from its log. */
function summarise(name, log, exitCode, seconds) {
  const last = (pattern) => {
    let found = null;
    for (const match of log.matchAll(pattern)) found = match;
    return found;
  };
  const status = last(/^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)\//gm);
  // Coverage once the corpus has run (INITED), to show what fuzzing added to it.
  const inited = /^#\d+\s+INITED\s+cov: (\d+) ft: (\d+)/m.exec(log);
  const stat = (key) => Number(last(new RegExp(`^stat::${key}:\\s+(\\d+)`, 'gm'))?.[1] ?? NaN);
  const executions = Number.isNaN(stat('number_of_executed_units')) ? Number(status?.[1] ?? 0) : stat('number_of_executed_units');
  const artifact = last(/Test unit written to (\S+)/gm)?.[1] ?? null;
  let finding = null;
  if (/ALARM: working on the last Unit for/.test(log)) finding = 'timeout';
  else if (/ERROR: libFuzzer: out-of-memory/.test(log)) finding = 'out-of-memory';
  else if (artifact !== null || exitCode !== 0) finding = (last(/^==\d+== (?:Uncaught Exception: )?(.+)$/gm)?.[1] ?? `exit ${exitCode}`).slice(0, 160);
  return {
    target: name,
    seconds,
    executions,
    edges: Number(status?.[2] ?? 0),
    features: Number(status?.[3] ?? 0),
    initialEdges: Number(inited?.[1] ?? 0),
    initialFeatures: Number(inited?.[2] ?? 0),
    corpus: Number(status?.[4] ?? 0),
    peakRssMb: stat('peak_rss_mb'),
    finding,
    artifact: artifact === null ? null : relative(ROOT, artifact),
  };
}

function runTarget(name, options) {
  const target = TARGETS[name];
  const dir = join(WORK, name);
  const corpus = join(dir, 'corpus');
  const artifacts = join(dir, 'artifacts');
  if (options.fresh) rmSync(corpus, { recursive: true, force: true });
  mkdirSync(corpus, { recursive: true });
  mkdirSync(artifacts, { recursive: true });
  const seeds = join(ROOT, 'fuzz', 'corpus', name);
  const jazzer = require.resolve('@jazzer.js/core/dist/cli.js');
  const includes = [join(BUILD, 'src'), ...(target.instrument ?? []).map((path) => join(ROOT, path))];
  const args = [
    '--require', join(ROOT, 'fuzz', 'lib', 'native-compat.cjs'),
    ...(target.nodeOptions ?? []),
    jazzer,
    join(BUILD, 'fuzz', 'targets', `${name}.js`),
    ...(target.sync ? ['--sync'] : []),
    ...includes.flatMap((path) => ['-i', path]),
    '-e', join(BUILD, 'fuzz'),
    `--timeout=${TIMEOUT_SECONDS * 1000}`,
    '--',
    corpus,
    ...(existsSync(seeds) ? [seeds] : []),
    `-rss_limit_mb=${RSS_LIMIT_MB}`,
    `-artifact_prefix=${artifacts}/`,
    '-print_final_stats=1',
    ...(target.maxLen ? [`-max_len=${target.maxLen}`] : []),
    ...(options.replay ? ['-runs=0'] : [`-max_total_time=${options.seconds}`, ...(options.runs ? [`-runs=${options.runs}`] : [])]),
  ];
  const logPath = join(dir, 'log.txt');
  const logFile = createWriteStream(logPath);
  let log = '';
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    // The log is scanned for libFuzzer's status lines; keep its head and tail, not all of it.
    const keep = (chunk) => {
      logFile.write(chunk);
      log += chunk.toString();
      if (log.length > 4_000_000) log = log.slice(0, 1_000_000) + log.slice(-2_000_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('close', (code, signal) => {
      logFile.end();
      // With --runs the run may end before --seconds: rates are over the time it took.
      const seconds = options.replay ? 0 : Math.max(1, Math.round((Date.now() - started) / 1000));
      const result = summarise(name, log, code ?? (signal ? 128 : 1), seconds);
      result.log = relative(ROOT, logPath);
      resolve(result);
    });
  });
}

function table(results) {
  const rows = [['target', 'executions', 'exec/s', 'edges (seeds)', 'features (seeds)', 'corpus', 'peak MB', 'result']];
  for (const r of results) {
    const rate = r.seconds > 0 ? Math.round(r.executions / r.seconds) : '-';
    rows.push([r.target, r.executions, rate, `${r.edges} (${r.initialEdges})`, `${r.features} (${r.initialFeatures})`, r.corpus, Number.isNaN(r.peakRssMb) ? '-' : r.peakRssMb, r.finding ? `FINDING ${r.finding}${r.artifact ? ` (${r.artifact})` : ''}` : 'ok'].map(String));
  }
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  ')).join('\n');
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.list) {
    for (const [name, target] of Object.entries(TARGETS)) console.log(`${name.padEnd(18)} ${target.description}`);
    return;
  }
  const names = options.names.length ? options.names : Object.keys(TARGETS);
  build();
  const queue = [...names];
  const results = [];
  const worker = async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      const started = Date.now();
      const result = await runTarget(name, options);
      result.wallSeconds = Math.round((Date.now() - started) / 100) / 10;
      console.error(`fuzz: ${name}: ${result.executions} executions, ${result.edges} edges, ${result.finding ?? 'ok'} (${result.wallSeconds} s)`);
      results.push(result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.jobs, names.length) }, worker));
  results.sort((a, b) => names.indexOf(a.target) - names.indexOf(b.target));
  console.log(table(results));
  if (options.json) writeFileSync(options.json, `${JSON.stringify({ date: new Date().toISOString(), ...options, results }, null, 2)}\n`);
  if (results.some((r) => r.finding)) process.exitCode = 1;
}

main().catch((error) => {
  console.error(`fuzz: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 2;
});
