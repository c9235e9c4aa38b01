/**
 * bench/rpm-publish's run through the service itself, in its own process so that its peak RSS is
 * the service's: the compiled service (as `npm start` runs it; the caller compiles it into
 * `serviceDir`), its SQLite database and its publisher, which reads the stored entries in pages
 * and appends after an upload.
 *   load <serviceDir> <dataDir> <entries.ndjson>     stores the file's entries as published rows
 *   measure <serviceDir> <dataDir> <entries.ndjson>  full publish (twice), then one add-one publish
 *                                                    per extra entry of the file's head line (a row
 *                                                    inserted as admission does, then the publish)
 * The repository key is Ed25519 unless SIGNING_KEY_ALGORITHM says otherwise (the writer-level runs
 * sign with Ed25519 too). Prints one JSON line.
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import type { PackageRow } from '../../src/adapters/db/packages.table.js';
import type { PackageChunks } from '../../src/domain/repo/rpm/assemble.js';
import { fileLines } from './lines.js';
import { loadRows, timePublishes } from './publish-rows.js';

const [mode, serviceDir, dataDir, entriesPath] = process.argv.slice(2);
const compiled = (path: string) => pathToFileURL(`${serviceDir}/${path}`).href;
const { loadConfig } = (await import(compiled('config.js'))) as typeof import('../../src/config.js');
const { closeContext, createContext } = (await import(compiled('services/context.js'))) as typeof import('../../src/services/context.js');
const { insertPackage } = (await import(compiled('adapters/db/packages.table.js'))) as typeof import('../../src/adapters/db/packages.table.js');

const DISTRIBUTION = 'rocky9';

/** A published row holding a stored entry, with the fields the entry itself gives. */
function row(entry: string, seq: number): PackageRow {
  const { key, primary } = JSON.parse(entry) as PackageChunks;
  const now = new Date().toISOString();
  const sha256 = /<checksum type="sha256" pkgid="YES">([0-9a-f]{64})</.exec(primary)?.[1] ?? '';
  const size = Number(/<size package="(\d+)"/.exec(primary)?.[1] ?? 0);
  const version = `${key.epoch ? `${key.epoch}:` : ''}${key.version}-${key.release}`;
  return {
    id: randomUUID(), distribution: DISTRIBUTION, format: 'rpm', name: key.name, version, arch: key.arch, component: 'main',
    status: 'published', cve_status: 'not_scanned', sha256, sha512: '', sha1: '', md5: '', upload_sha256: sha256, upload_size: size, signed_by: null,
    size, filename: key.location.split('/').pop()!, pool_path: `rpm/${DISTRIBUTION}/x86_64/${key.location}`, source_name: key.name,
    source_version: version, metadata: '{}', index_entry: entry, relations: '{}', files: '[]', pipeline: '[]',
    findings: '{"counts":{},"details":[]}', reasons: '[]', uploaded_by: 'bench', sla_deadline: null, seq, created_at: now, updated_at: now,
  };
}

async function readEntries(): Promise<{ extras: string[]; entries: AsyncGenerator<string> }> {
  const lines = fileLines(entriesPath!);
  const head = await lines.next();
  if (head.done) throw new Error(`${entriesPath} is empty`);
  async function* entries() {
    for await (const line of lines) if (line) yield JSON.parse(line) as string;
  }
  return { extras: (JSON.parse(head.value) as { extras: string[] }).extras, entries: entries() };
}

const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ENV: 'development', SIGNING_KEY_ALGORITHM: process.env.SIGNING_KEY_ALGORITHM ?? 'ed25519' });
const ctx = await createContext(config, pino({ level: 'silent' }));
const { extras, entries } = await readEntries();
// measure reads only the head line: the rows are in the database.
if (mode !== 'load') await entries.return(undefined);
await ctx.repo.keyring.ensureKey();
if (mode === 'load') {
  async function* rows() {
    let seq = 0;
    for await (const entry of entries) yield row(entry, ++seq);
  }
  console.log(JSON.stringify({ loaded: await loadRows(ctx, DISTRIBUTION, rows()) }));
} else {
  const { full, add } = await timePublishes(ctx, DISTRIBUTION, insertPackage, extras.map((e) => row(e, 0)));
  const signer = ctx.repo.keyring.current()!;
  console.log(JSON.stringify({ full, add, peakRssBytes: process.resourceUsage().maxRSS * 1024, algorithm: signer.algorithm }));
}
await closeContext(ctx);
