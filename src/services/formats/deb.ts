import { pipeline } from 'node:stream';
import { knownPrefix } from '../../domain/known-bytes.js';
import { createBoundedDecompressor } from '../../domain/compression.js';
import { descriptionSynopsis } from '../../domain/deb/control.js';
import { buildPackageIndex, checkDependencies, type PublishedPackage } from '../../domain/deb/dependencies.js';
import { openArMember, readDebPackage, type DebFileEntry } from '../../domain/deb/reader.js';
import { parseProvides, parseRelations } from '../../domain/deb/relations.js';
import type { Distribution } from '../../domain/distributions.js';
import type { DebInspected, FileFacts } from '../../domain/package.js';
import { debPoolPath, versionWithoutEpoch } from '../../domain/repo/apt/pool-path.js';
import { packageStanza } from '../../domain/repo/apt/stanza.js';
import type { FormatHandler, ProvideRow, ScanUnit } from './types.js';
import { readLocalHead } from '../../adapters/storage/local-file.js';
import { looksLikeSourceControl } from '../../domain/deb/dsc.js';
import { inspectDsc, isSourcePackage, relocateSourceIndexEntry, sourceIndexEntry, sourcePoolPath, sourceScanUnits } from './deb-source.js';

const APT_ROOT = 'apt/';

/** Compression of an ar member by its name (data.tar.zst …). */
const memberCompression = (name: string) =>
  name.endsWith('.gz') ? 'gzip' : name.endsWith('.xz') ? 'xz' : name.endsWith('.zst') ? 'zstd' : 'none';

/** A payload file as a package's `files` keep it. */
export const fileEntry = (f: DebFileEntry) => ({ path: f.installPath, size: f.size, mode: f.mode, type: f.type });

export const debHandler: FormatHandler<DebInspected> = {
  format: 'deb',

  async inspect(path, options) {
    // A .dsc (text, often clear-signed) is a source package: see deb-source.ts.
    const known = options?.known;
    if (looksLikeSourceControl(knownPrefix(known, 64) ?? await readLocalHead(path, 64))) return inspectDsc(path);
    const deferred = options?.deferPayload === true;
    const deb = await readDebPackage(path, {}, deferred ? 'defer' : 'list', known);
    const description = deb.control.get('Description') ?? '';
    return {
      format: 'deb',
      name: deb.name,
      version: deb.version,
      arch: deb.arch,
      sourceName: deb.sourceName,
      sourceVersion: deb.sourceVersion,
      summary: descriptionSynopsis(description),
      repositoryFilename: `${deb.name}_${versionWithoutEpoch(deb.version)}_${deb.arch}.deb`,
      files: deb.files.map(fileEntry),
      ...(deferred ? { filesPending: true } : {}),
      metadata: {
        control: deb.control.fields.map((f) => [f.name, f.value]),
        multiArch: deb.multiArch,
        members: deb.members.map((m) => ({ name: m.name, offset: m.offset, size: m.size })),
        installed_size: deb.installedSize,
        maintainer: deb.control.get('Maintainer') ?? null,
        homepage: deb.control.get('Homepage') ?? null,
        description,
      },
      relations: { ...deb.relations, multiArch: deb.multiArch },
    };
  },

  poolPath(pkg, _dist, component) {
    if (isSourcePackage(pkg)) return sourcePoolPath(pkg, component);
    return APT_ROOT + debPoolPath({ name: pkg.name, version: pkg.version, architecture: pkg.arch, source: pkg.sourceName, component });
  },

  indexEntry(pkg, facts: FileFacts, poolPath) {
    if (isSourcePackage(pkg)) return sourceIndexEntry(pkg, facts, poolPath);
    return packageStanza(pkg.metadata.control, { ...facts, filename: poolPath.slice(APT_ROOT.length) });
  },

  relocateIndexEntry(entry, from, to) {
    if (from.endsWith('.dsc')) return relocateSourceIndexEntry(entry, from, to);
    // The APT pool is shared by every distribution: the same file keeps the same Filename.
    if (from !== to) return entry.replace(`\nFilename: ${from.slice(APT_ROOT.length)}\n`, `\nFilename: ${to.slice(APT_ROOT.length)}\n`);
    return entry;
  },

  scanUnits(path, pkg, sourceFiles): ScanUnit[] {
    if (isSourcePackage(pkg)) return sourceScanUnits(path, pkg, sourceFiles ?? new Map());
    // clamd does not open ar archives, and not zstd either: hand it each member, zstd ones unpacked.
    return pkg.metadata.members.map((member) => ({
      name: member.name,
      open: () => {
        const raw = openArMember(path, member);
        if (memberCompression(member.name) !== 'zstd') return raw;
        // pipeline, not pipe: a read error reaches the reader instead of going unhandled, and a
        // reader that stops early closes the file.
        return pipeline(raw, createBoundedDecompressor('zstd', { maxOutputBytes: 16 * 1024 ** 3, maxRatio: 1000 }, member.size), () => undefined);
      },
    }));
  },

  provides(pkg) {
    // A source package satisfies no binary dependency.
    if (isSourcePackage(pkg)) return [];
    const rows: ProvideRow[] = [{ kind: 'package', name: pkg.name, version: pkg.version, flags: null }];
    for (const p of parseProvides(pkg.relations.provides)) rows.push({ kind: 'provides', name: p.name, version: p.version ?? null, flags: null });
    return rows;
  },

  async checkDependencies(pkg, lookup, dist: Distribution) {
    // Build dependencies are not checked: they are the build farm's concern, not the repository's.
    if (isSourcePackage(pkg)) return { all_satisfied: true, missing: [], install_blocked: false };
    const { relations } = pkg;
    const names = new Set<string>();
    for (const field of [relations.depends, relations.preDepends]) {
      for (const group of parseRelations(field)) for (const alt of group.alternatives) names.add(alt.name);
    }
    const rows = names.size ? await lookup([...names]) : [];
    const published = new Map<string, PublishedPackage & { provided: string[] }>();
    for (const row of rows) {
      const key = `${row.package} ${row.packageVersion} ${row.arch}`;
      const entry = published.get(key) ?? { name: row.package, version: row.packageVersion, arch: row.arch, multiArch: row.multiArch, provided: [] };
      if (row.kind === 'provides') entry.provided.push(row.version ? `${row.name} (= ${row.version})` : row.name);
      published.set(key, entry);
    }
    const index = buildPackageIndex([...published.values()].map((p) => ({ ...p, provides: p.provided.join(', ') || null })));
    const result = checkDependencies({ depends: relations.depends, preDepends: relations.preDepends }, index, {
      packageArch: pkg.arch,
      nativeArch: pkg.arch === 'all' ? dist.architectures[0]! : pkg.arch,
    });
    return { all_satisfied: result.all_satisfied, missing: result.missing.map((m) => ({ relation: m.relation, reason: m.reason })), install_blocked: result.install_blocked };
  },
};
