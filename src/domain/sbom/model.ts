/**
 * The typed package model both SBOM formats are written from. The service fills it from the
 * package row, the decision record and the cached inventory; the builders never see SQL or files.
 */

export type InnerEcosystem = 'npm' | 'pypi' | 'maven' | 'golang' | 'cargo';

/** A software component embedded in a package's payload (a node module, a wheel, a jar, a Go module). */
export interface InnerComponent {
  ecosystem: InnerEcosystem;
  /** Maven group, npm scope (with @); null otherwise. */
  namespace: string | null;
  name: string;
  version: string | null;
  purl: string;
  /** Where inside the package it was found (install path of the declaring file). */
  foundIn: string;
  /** As declared (an SPDX expression when the metadata gives one), else null. */
  license: string | null;
  /** Go: the main module of a binary; its dependencies are `dependsOn`-ed by it. */
  role?: 'main' | 'dependency';
}

/** What the payload holds beyond the package's own metadata, computed once per file (sha256). */
export interface PackageInventory {
  components: InnerComponent[];
  /** Licence of a deb from its machine-readable `copyright` file, as an SPDX-style expression. */
  copyrightLicense: string | null;
  /** Why nothing could be read (file missing from the store, unreadable payload); null when read. */
  error: string | null;
}

/** One CVE finding of a package with what the decision record says about it. */
export interface SbomVulnerability {
  id: string;
  advisoryId: string | null;
  severity: string;
  cvssScore: number | null;
  cvssVector: string | null;
  epss: number | null;
  epssPercentile: number | null;
  inKev: boolean | null;
  affectedComponent: string | null;
  installedVersion: string | null;
  fixedVersion: string | null;
  fixState: string | null;
  summary: string;
  /** The policy's action for this finding at scan time (allow, warn, review, block). */
  policyAction: string | null;
}

/** The decision record covering some of the package's findings. */
export interface SbomDecision {
  action: string;
  justification: string;
  decidedAt: string;
  expiresAt: string | null;
  targetVersion: string | null;
  coveredCveIds: string[];
}

export interface SbomPackage {
  /** The document-wide reference: the package's purl (unique: it carries name, version, arch, distro). */
  ref: string;
  purl: string;
  format: 'deb' | 'rpm';
  name: string;
  version: string;
  arch: string;
  distribution: string;
  status: string;
  sha256: string;
  size: number;
  filename: string;
  sourceName: string | null;
  sourceVersion: string | null;
  supplier: string | null;
  /** An SPDX-style expression, or null for NOASSERTION. */
  license: string | null;
  summary: string | null;
  description: string | null;
  homepage: string | null;
  /** Refs of the packages in the same document it depends on. */
  dependsOn: string[];
  components: InnerComponent[];
  vulnerabilities: SbomVulnerability[];
  decision: SbomDecision | null;
}

/** What the document is about: one package, or a whole distribution. */
export interface SbomSubject {
  kind: 'package' | 'distribution';
  name: string;
  version: string;
  /** Distribution codename. */
  distribution: string;
  description: string;
}

export interface SbomMeta {
  subject: SbomSubject;
  /** ISO 8601 UTC. */
  timestamp: string;
  /** A UUID: the CycloneDX serial number and the SPDX namespace suffix. */
  serial: string;
  toolVersion: string;
  /** Base of the SPDX documentNamespace, e.g. the service's public URL. */
  namespaceBase: string;
}

/** One JSON array of a streamed document: how each package contributes items to it. */
export interface DocumentSection {
  key: string;
  items(pkg: SbomPackage): unknown[];
}

/**
 * A document written as a head object, then arrays filled package by package, so a distribution
 * of any size is streamed: `head` holds every key that is not an array filled per package.
 */
export interface DocumentPlan {
  head: Record<string, unknown>;
  sections: DocumentSection[];
  /** Items written before the first package's, per section key (the root's own entries). */
  leading?: Record<string, unknown[]>;
}
