/**
 * bench/upload-floor: how many tiny uploads this machine takes at all, whatever the service.
 *
 *   npx tsx bench/upload-floor.ts [--packages 2000] [--clients 8] [--client http|fetch]
 *   npx tsx bench/upload-floor.ts --real [--limit 400] [--clients 4] [--client http|fetch]
 *
 * The same corpus and clients as bench/apt-upload (tiny .deb files, N concurrent clients
 * in this process, each waiting for its answer before the next upload), against a bare server in
 * the framework Tollgate uses (bench/lib/floor-server.mjs), at three tiers: `receive` (the body
 * parsed, the file dropped), `durable` (the four digests, the file written and fsynced, renamed
 * into a pool folder that is fsynced), `row` (and one SQLite row). Prints uploads per second, the
 * server's CPU time per upload and this process's (the clients'): what Tollgate's figures in
 * bench/apt-upload are to be read against. No validation, index, signature or audit trail here.
 * `--real`: bench/real-packages's files and clients instead (the machine's APT cache, amd64 and
 * all, sorted by name, the first `--limit`; streamed), in MB/s. The clients are bench/lib/upload-client.ts
 * (node:http; `--client fetch`: fetch, as before 2026-11-29, sixth session).
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../harness/net.js';
import { aptCacheCorpus, APT_CACHE } from './lib/apt-cache.js';
import { debCorpus } from './lib/deb-corpus.js';
import { numberArg as arg } from './lib/args.js';
import { textTable } from './lib/table.js';
import { cpuMsOf } from './lib/proc.js';
import { clientKindArg, UploadClient } from './lib/upload-client.js';

const root = new URL('..', import.meta.url).pathname;
const work = join(root, 'bench', '.work');
const REAL = process.argv.includes('--real');
const COUNT = arg('packages', 2000);
const LIMIT = arg('limit', 400);
const CLIENTS = arg('clients', REAL ? 4 : 8);
const TIERS = ['receive', 'durable', 'row'] as const;
const CLIENT = clientKindArg();

async function measure(tier: (typeof TIERS)[number], files: readonly string[]): Promise<string[]> {
  const dir = join(work, `floor-${tier}`);
  await rm(dir, { recursive: true, force: true });
  const port = await freePort();
  const server = spawn(process.execPath, [join(root, 'bench', 'lib', 'floor-server.mjs')], {
    env: { ...process.env, TIER: tier, DIR: dir, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const client = new UploadClient(`http://127.0.0.1:${port}`, CLIENTS, CLIENT);
  try {
    await new Promise((resolve, reject) => {
      server.stdout!.once('data', resolve);
      server.once('exit', (code) => reject(new Error(`the floor server exited (${code})`)));
    });
    // A real package is streamed as it is read, a tiny one sent whole.
    const upload = async (path: string) => {
      const answer = await client.upload(path, { distribution: REAL ? 'bookworm' : 'jammy' }, {}, REAL);
      return answer.status === 201 && (JSON.parse(answer.body) as { status?: string }).status === 'published';
    };
    let next = 0;
    let failed = 0;
    const serverBefore = await cpuMsOf(server.pid!);
    const clientsBefore = process.cpuUsage();
    const started = performance.now();
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (next < files.length) if (!(await upload(files[next++]!))) failed++;
    }));
    const seconds = (performance.now() - started) / 1000;
    const serverMs = (await cpuMsOf(server.pid!)) - serverBefore;
    const clients = process.cpuUsage(clientsBefore);
    if (failed > 0) throw new Error(`${failed} uploads not answered 201`);
    const clientsMs = (clients.user + clients.system) / 1000;
    if (REAL) {
      const gb = files.reduce((sum, f) => sum + statSync(f).size, 0) / 1e9;
      return [tier, (gb * 1000 / seconds).toFixed(1), (serverMs / 1000 / gb).toFixed(1), (clientsMs / 1000 / gb).toFixed(1)];
    }
    return [tier, (files.length / seconds).toFixed(1), (serverMs / files.length).toFixed(2), (clientsMs / files.length).toFixed(2)];
  } finally {
    client.close();
    server.kill();
  }
}

async function main(): Promise<void> {
  if (REAL) {
    const real = aptCacheCorpus(LIMIT);
    if (!real) return;
    const { files } = real;
    const rows = [['tier', 'MB/s', 'server CPU s/GB', 'clients CPU s/GB']];
    for (const tier of TIERS) rows.push(await measure(tier, files));
    console.log(`${files.length} packages of ${APT_CACHE} by ${CLIENTS} concurrent clients to a bare Fastify + @fastify/multipart server`);
    return console.log(textTable(rows));
  }
  // The corpus bench/apt-upload makes (with its 5 extra packages), shared when it is there.
  const corpus = await debCorpus(join(work, `upload-corpus-${COUNT}`), COUNT, 5);
  const files = corpus.entries.slice(0, COUNT).map((e) => join(corpus.repoRoot, e.poolPath));
  const rows = [['tier', 'uploads/s', 'server CPU ms/upload', 'clients CPU ms/upload']];
  for (const tier of TIERS) rows.push(await measure(tier, files));
  console.log(`${COUNT} tiny .deb uploads by ${CLIENTS} concurrent clients to a bare Fastify + @fastify/multipart server`);
  console.log(textTable(rows));
}

await main();
