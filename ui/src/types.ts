/** The API's answers, as far as the interface reads them (the service's TypeBox schemas are the source). */
export type Role = 'admin' | 'maintainer' | 'uploader' | 'auditor' | 'reader';
export const ROLES: Role[] = ['admin', 'maintainer', 'uploader', 'auditor', 'reader'];
export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'negligible';
export const SEVERITIES: Severity[] = ['critical', 'high', 'medium', 'low', 'negligible'];
export type PackageStatus = 'published' | 'pending_review' | 'accepted_risk' | 'exception' | 'upgrade_required' | 'quarantined' | 'rejected';
export const PACKAGE_STATUSES: PackageStatus[] = ['published', 'pending_review', 'accepted_risk', 'exception', 'upgrade_required', 'quarantined', 'rejected'];

export interface User {
  username: string;
  email: string | null;
  role: Role;
  full_name: string | null;
  active: boolean;
  last_login: string | null;
  source: string;
  mfa_enabled: boolean;
  created_at: string | null;
}

export interface Session {
  user: User;
  role: Role;
  csrf_token: string | null;
  can_decide: boolean;
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  per_page: number;
  pages: number;
}

export interface AuditEntry {
  seq: number;
  timestamp: string;
  action: string;
  user: string | null;
  result: string;
  package: string | null;
  version: string | null;
  detail: string | null;
  ip?: string | null;
}

export interface Finding {
  cve_id: string;
  advisory_id: string;
  severity: Severity;
  cvss_score: number | null;
  cvss_vector: string | null;
  epss: number | null;
  epss_percentile: number | null;
  in_kev: boolean | null;
  affected_component: string;
  installed_version: string;
  fixed_version: string | null;
  fix_state: string;
  summary: string;
  action: string;
  version?: string;
  distribution?: string;
}

export interface PackageVersion {
  id: string;
  name: string;
  version: string;
  arch: string;
  distribution: string;
  format: 'deb' | 'rpm';
  status: PackageStatus;
  cve_status: string;
  sha256: string;
  size: number;
  uploaded_by: string | null;
  uploaded_at: string | null;
  sla_deadline: string | null;
  findings: Record<string, number>;
  reasons: string[];
}

export interface ArtifactDetail {
  name: string;
  format: 'deb' | 'rpm';
  latest_version: string;
  versions: PackageVersion[];
  last_validation: { version: string; distribution: string; status: PackageStatus; steps: Array<{ name: string; status: string; message: string; value: string }> };
  cve_findings: Finding[];
}

export interface QueueItem {
  name: string;
  version: string;
  arch: string;
  distribution: string;
  status: PackageStatus;
  findings_count: number;
  counts: Record<Severity, number>;
  worst_severity: Severity | null;
  in_kev: boolean | null;
  epss: number | null;
  cvss_score: number | null;
  sla_deadline: string | null;
  sla_remaining_days: number | null;
  overdue: boolean;
  held_because: string[];
  findings: Finding[];
}

export interface Distribution {
  codename: string;
  description: string;
  format: 'deb' | 'rpm';
  architecture: string;
  package_count: number;
  published_at: string | null;
  up_to_date: boolean;
  /** What uploads may carry (index architectures plus all/noarch) and what the index is published for. */
  architectures: string[];
  index_architectures: string[];
  components: string[];
  suite: string;
  origin: string;
  label: string;
  /** Reading its files under /repo/ needs credentials (an API token or a read token). */
  private: boolean;
  built_in: boolean;
}

export interface ApiToken {
  token_id: string;
  name: string;
  role: Role;
  username: string;
  /** `read`: a tg_r_ token that reads only the /repo/ files of `distributions`. */
  kind: 'api' | 'read';
  distributions: string[] | null;
  prefix: string;
  created_at: string | null;
  expires_at: string | null;
  last_used_at: string | null;
  revoked: boolean;
}
