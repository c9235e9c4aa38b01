/**
 * Our side of bench/apt-publish, run in its own process so that its peak RSS is the service's.
 * It loads the compiled service bundled as `npm start` runs it in production (the caller builds
 * it: TOLLGATE_PUBLISH_SIDE) rather than transpiling src/ in-process, which alone adds ~70 MB of
 * RSS; and the caller runs this file compiled too (bench/tsconfig.publish-side.json), with plain
 * `node`: through the `tsx` loader, whose hooks run in a thread of their own, the process held
 * ~35 MiB more than the service does:
 *   load <dataDir> <manifest> <count>      stores the first `count` packages of the corpus (manifest.ndjson) in the database
 *   measure <dataDir> <extras.json> <count> [atRest]  full publish (twice) and add-one publishes (one per
 *                                           entry of extras.json: only those are read, so the
 *                                           corpus itself never counts in this process's peak RSS);
 *                                           the last `atRest` once the previous publish's background
 *                                           work is done (see timePublishes), the others back to back
 * BENCH_APT_LAYOUT=<architectures>x<components> (default 1x1) spreads the packages over that
 * many architectures and components of the distribution (`all` packages stay `all`).
 * Prints one JSON line. `measure` also reports `memory`: process.memoryUsage() (MiB) on start (the
 * compiled service's modules loaded), at rest (context created, key loaded: what the process holds
 * before any publish) and the highest of each field sampled every 5 ms during the publishes, so
 * the peak RSS can be split into what the process is at rest and what a publish adds.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import type { PackageRow } from '../../src/adapters/db/packages.table.js';
import { manifestEntries, type CorpusEntry } from './deb-corpus.js';
import { loadRows, timePublishes } from './publish-rows.js';

const mib = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
const usage = () => Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, mib(v)])) as Record<keyof NodeJS.MemoryUsage, number>;
const onStart = usage();
// TOLLGATE_PUBLISH_SIDE: the service's part this process drives, bundled (bench/lib/compiled-service.ts, bundlePublishSide).
if (!process.env.TOLLGATE_PUBLISH_SIDE) throw new Error('TOLLGATE_PUBLISH_SIDE (the bundle bench/apt-publish.ts builds) is not set');
type PublishSide = typeof import('../../src/config.js') & typeof import('../../src/services/context.js') & Pick<typeof import('../../src/adapters/db/packages.table.js'), 'insertPackage'>;
const { loadConfig, closeContext, createContext, insertPackage } = (await import(pathToFileURL(process.env.TOLLGATE_PUBLISH_SIDE).href)) as PublishSide;

const [mode, dataDir, manifestPath, countText, atRestArg] = process.argv.slice(2);
const count = Number(countText);
const [archCount, componentCount] = (process.env.BENCH_APT_LAYOUT ?? '1x1').split('x').map(Number) as [number, number];
const ARCHITECTURES = ['amd64', 'arm64', 'i386', 'armhf', 'ppc64el', 's390x'].slice(0, archCount);
const COMPONENTS = ['main', 'contrib', 'non-free', 'testing'].slice(0, componentCount);

function row(entry: CorpusEntry, seq: number): PackageRow {
  const now = new Date().toISOString();
  const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(entry.stanza)?.[1] ?? '';
  return {
    id: randomUUID(), distribution: 'jammy', format: 'deb', name: entry.name, version: field('Version'),
    arch: field('Architecture') === 'all' ? 'all' : ARCHITECTURES[seq % ARCHITECTURES.length]!, component: COMPONENTS[Math.floor(seq / ARCHITECTURES.length) % COMPONENTS.length]!,
    status: 'published', cve_status: 'not_scanned', sha256: field('SHA256'), sha512: field('SHA512'), sha1: field('SHA1'), md5: field('MD5sum'), upload_sha256: field('SHA256'), upload_size: Number(field('Size')), signed_by: null,
    size: Number(field('Size')), filename: entry.poolPath.split('/').pop()!, pool_path: `apt/${entry.poolPath}`, source_name: entry.name,
    source_version: field('Version'), metadata: '{}', index_entry: entry.stanza, relations: '{}', files: JSON.stringify(entry.files ?? []), pipeline: '[]',
    findings: '{"counts":{},"details":[]}', reasons: '[]', uploaded_by: 'bench', sla_deadline: null, seq, created_at: now, updated_at: now,
  };
}

const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ENV: 'development' });
const ctx = await createContext(config, pino({ level: 'silent' }));
if (mode === 'load') {
  await ctx.repo.keyring.ensureKey();
  if (archCount * componentCount > 1) {
    await ctx.repo.distributions.update('jammy', { architectures: ARCHITECTURES, components: COMPONENTS }, { username: 'bench', ip: null });
  }
  // Read and inserted a page at a time: at 500,000 packages the rows would not fit one string or array comfortably.
  async function* rows() {
    let seq = 0;
    for await (const entry of manifestEntries(manifestPath!)) {
      if (seq === count) return;
      yield row(entry, ++seq);
    }
  }
  const loaded = await loadRows(ctx, 'jammy', rows());
  console.log(JSON.stringify({ loaded }));
} else {
  const extras = JSON.parse(await readFile(manifestPath!, 'utf8')) as CorpusEntry[];
  await ctx.repo.keyring.ensureKey();
  const atRest = usage();
  const during = { ...atRest };
  const sampler = setInterval(() => {
    for (const [k, v] of Object.entries(usage()) as Array<[keyof NodeJS.MemoryUsage, number]>) during[k] = Math.max(during[k], v);
  }, 5);
  const { full, add, addAtRest } = await timePublishes(ctx, 'jammy', insertPackage, extras.map((e) => row(e, 0)), Number(atRestArg ?? 0));
  clearInterval(sampler);
  const signer = ctx.repo.keyring.current()!;
  const memory = { onStart, atRest, duringPublishes: during };
  console.log(JSON.stringify({ full, add, addAtRest, peakRssBytes: process.resourceUsage().maxRSS * 1024, algorithm: signer.algorithm, memory }));
}
await closeContext(ctx);
