/**
 * The resolver on real data: the machine's Debian bookworm main index (APT lists; skipped when
 * absent) against `apt-get install --simulate --no-install-recommends` with an empty dpkg status,
 * reading the same lists in a sandbox.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { compareDebianVersions } from '../../../src/domain/deb/version.js';
import { parseProvides } from '../../../src/domain/deb/relations.js';
import { debEntry, lines, stanzas } from '../../../src/domain/imports/deb822-stream.js';
import { resolveClosure, type CatalogPackage } from '../../../src/domain/imports/resolve.js';
import { debFormat, type NameLookups } from '../../../src/domain/imports/resolve-formats.js';
import { forEachProvidedName, type DebCatalogRelations } from '../../../src/domain/imports/catalog.js';
import { PackedCatalogBuilder } from '../../../src/domain/imports/packed-catalog.js';
import { makeTempDir } from '../../helpers/tmp.js';

const run = promisify(execFile);
const LISTS = '/var/lib/apt/lists';
const PACKAGES = join(LISTS, 'deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages.lz4');
const available = existsSync(PACKAGES) && existsSync('/usr/bin/apt-get') && existsSync('/usr/bin/lz4');

const WELL_KNOWN = [
  'curl', 'wget', 'git', 'openssh-client', 'vim', 'nginx-core', 'python3', 'perl', 'jq', 'rsync',
  'htop', 'tmux', 'sqlite3', 'postgresql-client-15', 'openssl', 'ca-certificates', 'gnupg', 'tar', 'zstd', 'xz-utils',
  'less', 'file', 'make', 'iproute2', 'unzip', 'bzip2', 'procps', 'netcat-openbsd', 'dnsutils', 'lsof',
];

async function* text(stream: NodeJS.ReadableStream): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  for await (const chunk of stream) yield decoder.write(chunk as Buffer);
  yield decoder.end();
}

describe('resolver against apt-get --simulate on the machine\'s Debian index', { skip: available ? false : 'no bookworm APT list or apt-get here' }, () => {
  const byName = new Map<string, CatalogPackage[]>();
  const providers = new Map<string, Array<{ pkg: CatalogPackage; version: string | null; flags: null }>>();
  const packing = new PackedCatalogBuilder();
  const bySeq: CatalogPackage[] = [];
  let sandbox: { dir: string; cleanup: () => Promise<void> };
  let aptArgs: string[];

  before(async () => {
    for await (const stanza of stanzas(lines(text(spawn('lz4', ['-dc', PACKAGES]).stdout)))) {
      const pkg: CatalogPackage = { ...debEntry(stanza), sourceId: 'bookworm' };
      byName.set(pkg.name, [...(byName.get(pkg.name) ?? []), pkg]);
      for (const p of parseProvides((pkg.relations as DebCatalogRelations).provides)) {
        providers.set(p.name, [...(providers.get(p.name) ?? []), { pkg, version: p.version, flags: null }]);
      }
      const seq = bySeq.push(pkg) - 1;
      packing.add(seq, pkg.format, pkg.name, pkg.version, pkg.arch, pkg.location, pkg.size, pkg.sha256, pkg.summary, JSON.stringify(pkg.relations));
      forEachProvidedName(pkg, (_kind, name, version, flags) => packing.addProvided(seq, name, version, flags));
    }
    sandbox = await makeTempDir('tollgate-aptsim-');
    for (const sub of ['etc/sources.list.d', 'etc/preferences.d', 'cache/archives/partial', 'state']) await mkdir(join(sandbox.dir, sub), { recursive: true });
    await writeFile(join(sandbox.dir, 'etc/sources.list'), 'deb http://deb.debian.org/debian bookworm main\n');
    await writeFile(join(sandbox.dir, 'state/status'), '');
    aptArgs = [
      `Dir::Etc::SourceList=${sandbox.dir}/etc/sources.list`, `Dir::Etc::SourceParts=${sandbox.dir}/etc/sources.list.d`,
      `Dir::Etc::Preferences=${sandbox.dir}/etc/preferences`, `Dir::Etc::PreferencesParts=${sandbox.dir}/etc/preferences.d`,
      `Dir::State::status=${sandbox.dir}/state/status`, `Dir::State::Lists=${LISTS}`, `Dir::Cache=${sandbox.dir}/cache`,
      // Named explicitly, apt writes its caches here and later runs reuse them.
      `Dir::Cache::pkgcache=${sandbox.dir}/cache/pkgcache.bin`, `Dir::Cache::srcpkgcache=${sandbox.dir}/cache/srcpkgcache.bin`,
      'APT::Architecture=amd64', 'APT::Architectures=amd64', 'Debug::NoLocking=1', 'APT::Install-Recommends=false',
    ].flatMap((o) => ['-o', o]);
  });
  after(() => sandbox?.cleanup());

  const lookups: NameLookups = {
    byName: async (name) => byName.get(name) ?? [],
    providers: async (name) => providers.get(name) ?? [],
    target: async () => [],
  };

  it(`computes the same closure as apt for ${WELL_KNOWN.length} well-known packages`, async () => {
    const format = debFormat(lookups, ['amd64', 'all']);
    const differences: string[] = [];
    let equal = 0;
    const simulate = async (name: string) => {
      const { stdout } = await run('apt-get', [...aptArgs, '-s', '-q', 'install', name], { maxBuffer: 16 * 1024 * 1024 });
      return [...stdout.matchAll(/^Inst (\S+) \((\S+)/gm)].map((m) => `${m[1]}=${m[2]}`).sort();
    };
    await simulate('tar'); // builds apt's caches once
    const expected = new Map<string, string[]>();
    for (let i = 0; i < WELL_KNOWN.length; i += 2) {
      const pair = WELL_KNOWN.slice(i, i + 2);
      (await Promise.all(pair.map(simulate))).forEach((result, j) => expected.set(pair[j]!, result));
    }
    for (const name of WELL_KNOWN) {
      const root = [...(byName.get(name) ?? [])].sort((a, b) => compareDebianVersions(b.version, a.version))[0];
      assert.ok(root, `${name} is in the index`);
      const started = performance.now();
      const closure = await resolveClosure(root, format);
      const ms = performance.now() - started;
      const ours = closure.selected.map((s) => `${s.pkg.name}=${s.pkg.version}`).sort();
      const apts = expected.get(name)!;
      if (JSON.stringify(ours) === JSON.stringify(apts) && closure.unsatisfiable.length === 0) equal += 1;
      else differences.push(`${name}: only ours ${ours.filter((x) => !apts.includes(x)).join(' ')}; only apt ${apts.filter((x) => !ours.includes(x)).join(' ')}`);
      assert.ok(ms < 1000, `${name} resolved in ${ms.toFixed(1)} ms`);
    }
    assert.deepEqual(differences, []);
    assert.ok(equal >= 20);
  });

  it('packed in memory as a sync packs it, answers every name of the index as read from it', () => {
    const packed = packing.finish();
    assert.equal(packed.packages, bySeq.length);
    const names = new Set([...byName.keys(), ...providers.keys()]);
    assert.ok(names.size > 60_000);
    const label = (pkg: CatalogPackage) => `${pkg.name}=${pkg.version}/${pkg.arch}`;
    for (const name of names) {
      const named: string[] = [];
      const providing: string[] = [];
      packed.visit(name, (seq) => named.push(label(bySeq[seq]!)), (seq, version) => providing.push(`${label(bySeq[seq]!)} ${version}`));
      assert.deepEqual(named, (byName.get(name) ?? []).map(label), name);
      assert.deepEqual(providing, (providers.get(name) ?? []).map((p) => `${label(p.pkg)} ${p.version}`), name);
    }
    bySeq.forEach((pkg, seq) => {
      const r = packed.record(seq);
      assert.deepEqual([r.name, r.version, r.arch, r.location, r.size, r.sha256, r.summary, JSON.parse(r.relations)], [pkg.name, pkg.version, pkg.arch, pkg.location, pkg.size, pkg.sha256, pkg.summary, pkg.relations]);
    });
  });
});
