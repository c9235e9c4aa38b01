import { openLocalFile } from '../../adapters/storage/local-file.js';
import { withSystemXz } from '../../adapters/storage/xz.js';
import { readRpmPackage } from '../../domain/rpm/reader.js';
import { DEFAULT_PAYLOAD_LIMITS, openRpmPayload } from '../../domain/rpm/payload.js';
import { checkRequires, type ProvideCandidate } from '../../domain/rpm/relations.js';
import { formatEvr } from '../../domain/rpm/vercmp.js';
import { PackageFormatError } from '../../domain/errors.js';
import type { FileFacts, RpmInspected } from '../../domain/package.js';
import { packageChunks } from '../../domain/repo/rpm/assemble.js';
import type { FormatHandler, ProvideRow, ScanUnit } from './types.js';
import { rpmTreeRoot, rpmTreesOf } from '../../domain/repo/rpm/tree.js';

/** createrepo_c's primary file subset: what dnf resolves file requires against without filelists. */
const PRIMARY_FILE = /^(\/etc\/|.*\/bin\/|\/usr\/lib\/sendmail$)/;
const NAME = /^[A-Za-z0-9_+][A-Za-z0-9._+-]{0,200}$/;
const VERSION_PART = /^[A-Za-z0-9._+~^]{1,128}$/;

/** `openssl-3.0.7-24.el9.src.rpm` → `openssl`; the source RPM name is what SUSE advisories name. */
export function sourceRpmName(sourceRpm: string, fallback: string): { name: string; version: string } {
  const m = /^(.+)-([^-]+)-([^-]+)\.(no)?src\.rpm$/.exec(sourceRpm);
  return m ? { name: m[1]!, version: `${m[2]}-${m[3]}` } : { name: fallback, version: '' };
}

export const rpmHandler: FormatHandler<RpmInspected> = {
  format: 'rpm',

  async inspect(path) {
    const rpm = await readRpmPackage(path);
    if (rpm.isSource) throw new PackageFormatError('source_package', 'source RPMs are not accepted; upload binary packages');
    if (!NAME.test(rpm.name)) throw new PackageFormatError('invalid_package_name', `invalid package name ${JSON.stringify(rpm.name)}`);
    if (!VERSION_PART.test(rpm.version) || !VERSION_PART.test(rpm.release)) {
      throw new PackageFormatError('invalid_version', `invalid version ${JSON.stringify(`${rpm.version}-${rpm.release}`)}`);
    }
    const version = formatEvr({ epoch: rpm.epoch, version: rpm.version, release: rpm.release });
    const source = sourceRpmName(rpm.sourceRpm, rpm.name);
    return {
      format: 'rpm',
      name: rpm.name,
      version,
      arch: rpm.arch,
      sourceName: source.name,
      sourceVersion: source.version || `${rpm.version}-${rpm.release}`,
      summary: rpm.summary,
      repositoryFilename: `${rpm.name}-${rpm.version}-${rpm.release}.${rpm.arch}.rpm`,
      files: rpm.files.map((f) => ({ path: f.path, size: f.size, mode: f.mode, type: f.type })),
      metadata: rpm,
      relations: { requires: rpm.requires, provides: rpm.provides, conflicts: rpm.conflicts, obsoletes: rpm.obsoletes, recommends: rpm.recommends },
    };
  },

  poolPath(pkg, dist, _component, rewritten) {
    // Its architecture's tree; a noarch package's file is stored in the first one (and linked
    // into the others: rpmNoarchCopies).
    const folder = `${rpmTreeRoot(dist, rpmTreesOf(dist, pkg.arch)[0])}Packages/${pkg.repositoryFilename[0]!.toLowerCase()}/`;
    return `${folder}${rewritten ? `${rewritten.slice(0, 16)}/` : ''}${pkg.repositoryFilename}`;
  },

  indexEntry(pkg, facts: FileFacts, poolPath, fileTime) {
    const href = poolPath.replace(/^rpm\/[^/]+\/[^/]+\//, '');
    return JSON.stringify(packageChunks({ pkg: pkg.metadata, checksum: facts.sha256, locationHref: href, fileTime }));
  },

  relocateIndexEntry(entry, from, to) {
    const fromHref = from.replace(/^rpm\/[^/]+\/[^/]+\//, '');
    const toHref = to.replace(/^rpm\/[^/]+\/[^/]+\//, '');
    return fromHref === toHref ? entry : entry.split(fromHref).join(toHref);
  },

  scanUnits(path, pkg): ScanUnit[] {
    // The whole file (headers, scripts) and the decompressed payload: clamd unpacks cpio itself.
    return [
      { name: 'package', open: () => openLocalFile(path) },
      { name: 'payload', open: () => openRpmPayload(path, pkg.metadata, withSystemXz(DEFAULT_PAYLOAD_LIMITS)) },
    ];
  },

  provides(pkg) {
    const rpm = pkg.metadata;
    const rows: ProvideRow[] = rpm.provides.map((p) => ({ kind: 'provides', name: p.name, version: p.evr || null, flags: p.flags }));
    for (const f of rpm.files) if (PRIMARY_FILE.test(f.path)) rows.push({ kind: 'file', name: f.path, version: null, flags: null });
    return rows;
  },

  async checkDependencies(pkg, lookup) {
    const rpm = pkg.metadata;
    const wanted = new Set([...rpm.requires, ...rpm.recommends].map((r) => r.name));
    const rows = wanted.size ? await lookup([...wanted]) : [];
    const providers = new Map<string, ProvideCandidate[]>();
    const owners = new Map<string, string[]>();
    for (const row of rows) {
      const who = `${row.package}-${row.packageVersion}.${row.arch}`;
      if (row.kind === 'file') owners.set(row.name, [...(owners.get(row.name) ?? []), who]);
      else providers.set(row.name, [...(providers.get(row.name) ?? []), { provider: who, flags: row.flags ?? 0, evr: row.version ?? '' }]);
    }
    const result = await checkRequires(rpm, {
      providers: (name) => providers.get(name) ?? [],
      fileOwners: (path) => owners.get(path) ?? [],
    });
    return {
      all_satisfied: result.all_satisfied,
      missing: result.missing.map((m) => ({ relation: m.relation, reason: m.reason })),
      install_blocked: result.install_blocked,
    };
  },
};
