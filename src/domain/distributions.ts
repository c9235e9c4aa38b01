/**
 * The distributions the service knows, in one table. Each carries its package format, the
 * architecture of its index, the architectures it accepts, and the OSV ecosystem and scanner
 * identifier its advisories come from.
 */
export type PackageFormat = 'deb' | 'rpm';

export interface Distribution {
  codename: string;
  format: PackageFormat;
  description: string;
  /** The index architecture: `amd64` (APT) or `x86_64` (RPM). */
  architecture: 'amd64' | 'x86_64';
  /** Architectures accepted in uploads; `all`/`noarch` packages are listed in the index too. */
  acceptedArchitectures: readonly string[];
  component: 'main' | null;
  osvEcosystem: string;
  scannerDistro: string;
}

const apt = (codename: string, description: string, osvEcosystem: string, scannerDistro: string): Distribution => ({
  codename, format: 'deb', description, architecture: 'amd64', acceptedArchitectures: ['amd64', 'all'], component: 'main', osvEcosystem, scannerDistro,
});
const rpm = (codename: string, description: string, osvEcosystem: string, scannerDistro: string): Distribution => ({
  codename, format: 'rpm', description, architecture: 'x86_64', acceptedArchitectures: ['x86_64', 'noarch'], component: null, osvEcosystem, scannerDistro,
});

export const DISTRIBUTIONS: readonly Distribution[] = [
  apt('jammy', 'Ubuntu 22.04 LTS', 'Ubuntu:22.04:LTS', 'ubuntu:22.04'),
  apt('noble', 'Ubuntu 24.04 LTS', 'Ubuntu:24.04:LTS', 'ubuntu:24.04'),
  apt('focal', 'Ubuntu 20.04 LTS', 'Ubuntu:20.04:LTS', 'ubuntu:20.04'),
  apt('bookworm', 'Debian 12', 'Debian:12', 'debian:12'),
  rpm('almalinux8', 'AlmaLinux 8', 'AlmaLinux:8', 'almalinux:8'),
  rpm('almalinux9', 'AlmaLinux 9', 'AlmaLinux:9', 'almalinux:9'),
  rpm('rocky8', 'Rocky Linux 8', 'Rocky Linux:8', 'rockylinux:8'),
  rpm('rocky9', 'Rocky Linux 9', 'Rocky Linux:9', 'rockylinux:9'),
  rpm('centos-stream9', 'CentOS Stream 9', 'CentOS:9', 'centos:9'),
  rpm('fedora', 'Fedora 42', 'Fedora:42', 'fedora:42'),
  rpm('opensuse-leap-15.6', 'openSUSE Leap 15.6', 'openSUSE:Leap 15.6', 'opensuse/leap:15.6'),
];

const BY_CODENAME = new Map(DISTRIBUTIONS.map((d) => [d.codename, d]));

export function findDistribution(codename: string): Distribution | undefined {
  return BY_CODENAME.get(codename);
}

/** Statuses whose packages are listed in the signed index. */
export const INDEXED_STATUSES = ['published', 'accepted_risk', 'exception'] as const;
export const PACKAGE_STATUSES = ['published', 'pending_review', 'accepted_risk', 'exception', 'upgrade_required', 'quarantined', 'rejected'] as const;
export type PackageStatus = (typeof PACKAGE_STATUSES)[number];
export const isIndexed = (status: string): boolean => (INDEXED_STATUSES as readonly string[]).includes(status);
