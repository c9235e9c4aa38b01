/**
 * Distributions: what each publishes (format, components, architectures), how its Release names
 * it, where its advisories come from, and who may read it. The built-in table is the default the
 * database is seeded with; operators add, change and retire distributions through the API or a
 * file read at start (services/distributions.ts), and this module holds the process's current
 * view of them, which that service refreshes.
 */
import { DomainError } from './errors.js';

export type PackageFormat = 'deb' | 'rpm';

export interface Distribution {
  codename: string;
  format: PackageFormat;
  description: string;
  /** Release `Suite`, `Origin` and `Label` (APT). */
  suite: string;
  origin: string;
  label: string;
  /** APT components, the first the default for uploads; RPM repositories have none (empty). */
  components: readonly string[];
  /** Index architectures: `amd64`, `arm64`… (APT), `x86_64`, `aarch64`… (RPM); the first is the default. */
  architectures: readonly string[];
  osvEcosystem: string;
  scannerDistro: string;
  /** `/repo/` answers 401 for this distribution's files unless the request authenticates. */
  private: boolean;
  /** One of the built-in table's distributions (they can be changed, not retired). */
  builtIn: boolean;
}

/** `Architecture: all` (APT) / `noarch` (RPM): listed in every architecture's index. */
export const independentArchitecture = (format: PackageFormat): string => (format === 'deb' ? 'all' : 'noarch');

/** Architectures an upload may carry: the index architectures and the architecture-independent one. */
export const acceptedArchitectures = (d: Pick<Distribution, 'format' | 'architectures'>): string[] => [...d.architectures, independentArchitecture(d.format)];

/** The indexes a package of this architecture is listed in. */
export function indexArchitecturesOf(d: Pick<Distribution, 'format' | 'architectures'>, arch: string): readonly string[] {
  return arch === independentArchitecture(d.format) ? d.architectures : d.architectures.includes(arch) ? [arch] : [];
}

/** The component an upload lands in: the one named, else the distribution's first; null for RPM. */
export function componentFor(d: Pick<Distribution, 'format' | 'components' | 'codename'>, requested: string | null | undefined): string {
  if (d.format === 'rpm') {
    if (requested && requested !== 'main') throw new DomainError('invalid', 'unknown_component', `RPM distribution ${d.codename} has no components`);
    return 'main';
  }
  const component = requested || d.components[0]!;
  if (!d.components.includes(component)) {
    throw new DomainError('invalid', 'unknown_component', `component ${component} is not one of ${d.codename}'s (${d.components.join(', ')})`);
  }
  return component;
}

const builtIn = (format: PackageFormat, codename: string, description: string, osvEcosystem: string, scannerDistro: string): Distribution => ({
  codename,
  format,
  description,
  suite: codename,
  origin: 'Tollgate',
  label: 'Tollgate',
  components: format === 'deb' ? ['main'] : [],
  architectures: format === 'deb' ? ['amd64'] : ['x86_64'],
  osvEcosystem,
  scannerDistro,
  private: false,
  builtIn: true,
});

export const BUILT_IN_DISTRIBUTIONS: readonly Distribution[] = [
  builtIn('deb', 'jammy', 'Ubuntu 22.04 LTS', 'Ubuntu:22.04:LTS', 'ubuntu:22.04'),
  builtIn('deb', 'noble', 'Ubuntu 24.04 LTS', 'Ubuntu:24.04:LTS', 'ubuntu:24.04'),
  builtIn('deb', 'focal', 'Ubuntu 20.04 LTS', 'Ubuntu:20.04:LTS', 'ubuntu:20.04'),
  builtIn('deb', 'bookworm', 'Debian 12', 'Debian:12', 'debian:12'),
  builtIn('rpm', 'almalinux8', 'AlmaLinux 8', 'AlmaLinux:8', 'almalinux:8'),
  builtIn('rpm', 'almalinux9', 'AlmaLinux 9', 'AlmaLinux:9', 'almalinux:9'),
  builtIn('rpm', 'rocky8', 'Rocky Linux 8', 'Rocky Linux:8', 'rockylinux:8'),
  builtIn('rpm', 'rocky9', 'Rocky Linux 9', 'Rocky Linux:9', 'rockylinux:9'),
  builtIn('rpm', 'centos-stream9', 'CentOS Stream 9', 'CentOS:9', 'centos:9'),
  builtIn('rpm', 'fedora', 'Fedora 42', 'Fedora:42', 'fedora:42'),
  builtIn('rpm', 'opensuse-leap-15.6', 'openSUSE Leap 15.6', 'openSUSE:Leap 15.6', 'opensuse/leap:15.6'),
];

/**
 * The process's current distributions. A module-level view rather than an injected object
 * because the codename → distribution look-up is made from parsers, settings rules and services
 * alike; services/distributions.ts is the only writer.
 */
let current = new Map(BUILT_IN_DISTRIBUTIONS.map((d) => [d.codename, d]));

export function findDistribution(codename: string): Distribution | undefined {
  return current.get(codename);
}

/** Every active distribution, in the order they were defined. */
export function allDistributions(): Distribution[] {
  return [...current.values()];
}

/** Replaces the view (start-up, a change through the API, another replica's change). */
export function setDistributions(list: readonly Distribution[]): void {
  current = new Map(list.map((d) => [d.codename, d]));
}

/** Statuses whose packages are listed in the signed index. */
export const INDEXED_STATUSES = ['published', 'accepted_risk', 'exception'] as const;
export const PACKAGE_STATUSES = ['published', 'pending_review', 'accepted_risk', 'exception', 'upgrade_required', 'quarantined', 'rejected'] as const;
export type PackageStatus = (typeof PACKAGE_STATUSES)[number];
export const isIndexed = (status: string): boolean => (INDEXED_STATUSES as readonly string[]).includes(status);
