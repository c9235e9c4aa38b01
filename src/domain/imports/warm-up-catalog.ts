/**
 * A made-up catalog for warming the resolver's code before the first real resolution: V8 runs a
 * function in its interpreter until it has run often enough to be compiled, and the walk over a
 * large closure (kde-full: ~1,200 packages, ~11,000 requirement checks) spends most of a first
 * resolution there (measured: kde-full 127 ms cold against 29-36 ms once the code had run on
 * other closures). The fields have the shapes real indexes have (epochs, `~` and `+` versions,
 * alternatives, version relations, virtual names, `:any`, Multi-Arch; RPM EVR ranges, rich and
 * file dependencies), so the compiled code is the one real data runs. Nothing here is real and
 * nothing of it is kept: it only exercises the code.
 */
import type { CatalogEntry, RpmRelation } from './catalog.js';
import { Sense } from '../rpm/tags.js';

/** Versions made of these parts (by index, so neighbours differ in length, letters, `~`, `+`, epoch). */
const EPOCHS = ['', '', '1:', '', '2:'];
const UPSTREAMS = ['1.0', '1.0.1', '1.0~rc1', '1.5.0+ds1', '2.36', '2.36.1', '10', '1.2.3a', '0.9.4', '9.0.2+dfsg', '20230101', '5.36.0', '3.1', '1.0~', '4.2.0~beta2'];
const REVISIONS = ['-1', '-1+b4', '-1~deb12u1', '-2.1', '', '-0ubuntu1', '-7+deb12u1', '-3'];
const debVersion = (i: number): string => `${EPOCHS[i % EPOCHS.length]}${UPSTREAMS[(i * 7) % UPSTREAMS.length]}${REVISIONS[(i * 3) % REVISIONS.length]}`;
const RPM_VERSIONS = ['1.5.0-1.el9', '2:1.2.3-4.fc39', '3.1~rc1-2', '9.0.2^git1-1', '0.9.4-1.1.el9_2', '1.0-1', '10.2.1-3.el9', '1:2.36-9.fc38'];
const DEB_OPERATORS = ['>=', '<<', '=', '<=', '>='];

/** Deterministic spread, so every warm-up runs the same walk. */
const name = (i: number): string => `warm-${i}`;
const pick = <T>(list: readonly T[], i: number): T => list[i % list.length]!;

/**
 * `count` Debian packages `warm-0`..: each depends on a few of the packages after it (so
 * `warm-0`'s closure is all of them) with version relations, alternatives, a virtual name some
 * provide, `:any` on Multi-Arch: allowed ones, and a cycle back.
 */
export function debWarmUpCatalog(count: number): CatalogEntry[] {
  const entries: CatalogEntry[] = [];
  for (let i = 0; i < count; i++) {
    const version = debVersion(i);
    const depends: string[] = [];
    for (let k = 1; k <= 6; k++) {
      const target = i + k * k;
      if (target >= count) break;
      // Met by the target's own version (`<<` by one just above it), as real relations mostly are.
      const op = pick(DEB_OPERATORS, i + k);
      const relation = k % 3 === 0 ? ` (${op} ${debVersion(target)}${op === '<<' ? '.1' : ''})` : '';
      const qualifier = target % 7 === 0 ? ':any' : '';
      depends.push(k === 2 ? `${name(i)}-missing | ${name(target)}${qualifier}${relation}` : `${name(target)}${qualifier}${relation}`);
    }
    if (i % 5 === 4) depends.push(`${name(i % 11)}-virtual`);
    if (i > 0 && i % 13 === 0) depends.push(name(i - 1));
    entries.push({
      format: 'deb', name: name(i), version, arch: i % 4 === 0 ? 'all' : 'amd64',
      location: `pool/main/w/${name(i)}/${name(i)}_${version}_amd64.deb`, size: 1000 + i, sha256: '0'.repeat(64), summary: 'warm-up',
      relations: {
        depends: depends.length > 0 ? depends.join(', ') : null,
        preDepends: i % 9 === 0 && i + 1 < count ? name(i + 1) : null,
        provides: i % 3 === 0 ? `${name(i % 11)}-virtual (= ${version})` : null,
        multiArch: i % 7 === 0 ? 'allowed' : i % 2 === 0 ? 'same' : null,
      },
    });
    // Some names in two versions, so candidates are sorted by version as real catalogs sometimes need.
    if (i % 10 === 5) entries.push({ ...entries[entries.length - 1]!, version: debVersion(i + 1) });
  }
  return entries;
}

/** The same for RPM: versioned requires and provides, a file dependency, an `or` rich one. */
export function rpmWarmUpCatalog(count: number): CatalogEntry[] {
  const entries: CatalogEntry[] = [];
  for (let i = 0; i < count; i++) {
    const version = pick(RPM_VERSIONS, i);
    const requires: RpmRelation[] = [];
    for (let k = 1; k <= 6; k++) {
      const target = i + k * k;
      if (target >= count) break;
      requires.push(k % 3 === 0 ? { name: name(target), flags: Sense.GREATER | Sense.EQUAL, evr: '0.1-1' } : { name: name(target), flags: 0, evr: '' });
    }
    if (i % 5 === 4) requires.push({ name: `${name(i % 11)}-virtual(x86-64)`, flags: 0, evr: '' });
    if (i % 8 === 1 && i + 2 < count) requires.push({ name: `/usr/bin/${name(i + 2)}`, flags: 0, evr: '' });
    if (i % 10 === 3 && i + 4 < count) requires.push({ name: `(${name(i)}-missing or ${name(i + 4)})`, flags: 0, evr: '' });
    requires.push({ name: 'rpmlib(CompressedFileNames)', flags: Sense.LESS | Sense.EQUAL, evr: '3.0.4-1' });
    entries.push({
      format: 'rpm', name: name(i), version, arch: i % 4 === 0 ? 'noarch' : 'x86_64',
      location: `Packages/w/${name(i)}-${version}.x86_64.rpm`, size: 1000 + i, sha256: '0'.repeat(64), summary: 'warm-up',
      relations: {
        requires,
        provides: [{ name: name(i), flags: Sense.EQUAL, evr: version }, ...(i % 3 === 0 ? [{ name: `${name(i % 11)}-virtual(x86-64)`, flags: Sense.EQUAL, evr: version }] : [])],
        files: [`/usr/bin/${name(i)}`],
      },
    });
    if (i % 10 === 5) entries.push({ ...entries[entries.length - 1]!, version: pick(RPM_VERSIONS, i + 1) });
  }
  return entries;
}
