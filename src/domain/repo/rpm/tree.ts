import { findDistribution, type Distribution } from '../../distributions.js';

/**
 * Root of one architecture's RPM tree inside the repository, e.g. `rpm/rocky9/x86_64/`: one tree
 * and one signed repodata per architecture, as dnf's `$basearch` repositories are laid out. The
 * default is the first architecture, where a `noarch` package's file is stored (see
 * {@link rpmNoarchCopies} for the other trees).
 */
export const rpmTreeRoot = (dist: Pick<Distribution, 'codename' | 'architectures'>, arch: string = dist.architectures[0]!) =>
  `rpm/${dist.codename}/${arch}/`;

/** The architecture trees a package of `arch` is listed (and its file published) in. */
export const rpmTreesOf = (dist: Pick<Distribution, 'architectures'>, arch: string): readonly string[] =>
  dist.architectures.includes(arch) ? [arch] : arch === 'noarch' ? dist.architectures : [dist.architectures[0]!];

const NOARCH_POOL_PATH = /^rpm\/([^/]+)\/([^/]+)\/(Packages\/.+\.noarch\.rpm)$/;

/**
 * The other places of the published tree that hold the file at `poolPath`: a `noarch` package of
 * an RPM distribution with several architectures is in every architecture's tree (hard links to
 * one stored file), at the same `Packages/…` path, so each tree's repodata reaches it as
 * createrepo_c would list it. Empty for every other file.
 */
export function rpmNoarchCopies(poolPath: string): string[] {
  const m = NOARCH_POOL_PATH.exec(poolPath);
  if (!m) return [];
  const dist = findDistribution(m[1]!);
  if (!dist || dist.format !== 'rpm' || dist.architectures.length < 2) return [];
  return dist.architectures.filter((a) => a !== m[2]).map((a) => `${rpmTreeRoot(dist, a)}${m[3]}`);
}

/** `poolPath` (a file of some architecture's tree of its distribution) moved to `arch`'s tree. */
export const rpmPathInTree = (poolPath: string, arch: string): string => poolPath.replace(/^(rpm\/[^/]+\/)[^/]+\//, `$1${arch}/`);
