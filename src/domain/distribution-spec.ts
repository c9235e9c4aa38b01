/**
 * A distribution definition as operators write it (API body, the start-up file), checked and
 * completed into a `Distribution`. Every problem is reported at once, with its field.
 */
import { DomainError } from './errors.js';
import type { Distribution, PackageFormat } from './distributions.js';

/** What an operator may set; omitted fields keep their current value, or the default. */
export interface DistributionSpec {
  codename?: unknown;
  format?: unknown;
  description?: unknown;
  suite?: unknown;
  origin?: unknown;
  label?: unknown;
  components?: unknown;
  architectures?: unknown;
  osv_ecosystem?: unknown;
  scanner_distro?: unknown;
  private?: unknown;
}

/** Architectures an index may be published for (dpkg's and rpm's names). */
export const KNOWN_ARCHITECTURES: Record<PackageFormat, readonly string[]> = {
  deb: ['amd64', 'arm64', 'i386', 'armhf', 'armel', 'ppc64el', 's390x', 'riscv64', 'mips64el', 'loong64'],
  rpm: ['x86_64', 'aarch64', 'ppc64le', 's390x', 'i686', 'armv7hl', 'riscv64'],
};

/** Also a path segment of the published tree and of URLs: lower case, no dots at the start. */
const NAME = /^[a-z0-9][a-z0-9+-]*(?:\.[a-z0-9+-]+)*$/;
/** dpkg's and rpm's architecture names (`x86_64`); each must be a known one as well. */
const ARCHITECTURE = /^[a-z0-9][a-z0-9_]*$/;
/** A pool path segment (`pool/<component>/…`), as dpkg tools name them. */
const COMPONENT = /^[a-z0-9][a-z0-9-]*$/;
/** Release fields are single lines of a deb822 file. */
const FIELD = /^[^\r\n:]*[^\r\n\s:][^\r\n]*$/;
const MAX_COMPONENTS = 16;

interface Problem {
  loc: string[];
  msg: string;
}

export class DistributionSpecError extends DomainError {
  constructor(readonly problems: Problem[]) {
    super('invalid', 'invalid_distribution', problems.map((p) => `${p.loc.join('.')}: ${p.msg}`).join('; '), {
      errors: problems.map((p) => ({ loc: ['body', ...p.loc], msg: p.msg })),
    });
  }
}

/**
 * Checks `spec` and completes it: over `existing` for a change (the codename and format cannot
 * change), else over the defaults for a new distribution.
 */
export function distributionFromSpec(spec: DistributionSpec, existing: Distribution | null): Distribution {
  const problems: Problem[] = [];
  const fail = (field: string, msg: string) => problems.push({ loc: [field], msg });
  const text = (field: keyof DistributionSpec, pattern: RegExp, max: number, fallback: string, optional = false): string => {
    const value = spec[field];
    if (value === undefined) return fallback;
    if (optional && value === '') return '';
    if (typeof value !== 'string' || value.length > max || !pattern.test(value)) {
      fail(field, `must be ${pattern === NAME ? 'lower-case letters, digits, "+", "-" and inner dots' : 'one line of text'} (at most ${max} characters)`);
      return fallback;
    }
    return value;
  };

  const codename = existing ? existing.codename : text('codename', NAME, 50, '');
  if (existing && spec.codename !== undefined && spec.codename !== existing.codename) fail('codename', 'cannot change');
  if (!existing && !codename && spec.codename === undefined) fail('codename', 'required');

  let format: PackageFormat = existing?.format ?? 'deb';
  if (existing && spec.format !== undefined && spec.format !== existing.format) fail('format', 'cannot change');
  if (!existing) {
    if (spec.format === 'deb' || spec.format === 'rpm') format = spec.format;
    else fail('format', spec.format === undefined ? 'required' : 'must be deb or rpm');
  }

  const names = (field: 'components' | 'architectures', allowed: readonly string[] | null, fallback: readonly string[]): string[] => {
    const pattern = field === 'components' ? COMPONENT : ARCHITECTURE;
    const value = spec[field];
    if (value === undefined) return [...fallback];
    if (!Array.isArray(value) || value.length === 0 || value.length > MAX_COMPONENTS) {
      fail(field, `must be a list of 1 to ${MAX_COMPONENTS} names`);
      return [...fallback];
    }
    const bad = value.filter((v) => typeof v !== 'string' || v.length > 50 || !pattern.test(v) || (allowed !== null && !allowed.includes(v)));
    if (bad.length > 0) fail(field, `${bad.map((b) => JSON.stringify(b)).join(', ')} not ${allowed ? `one of ${allowed.join(', ')}` : 'a valid name'}`);
    if (new Set(value).size !== value.length) fail(field, 'names repeat');
    return value as string[];
  };

  const components = format === 'rpm' ? [] : names('components', null, existing?.components ?? ['main']);
  if (format === 'rpm' && spec.components !== undefined && !(Array.isArray(spec.components) && spec.components.length === 0)) {
    fail('components', 'RPM repositories have no components');
  }
  const architectures = names('architectures', KNOWN_ARCHITECTURES[format], existing?.architectures ?? [format === 'deb' ? 'amd64' : 'x86_64']);
  // RPM: one tree and one signed repodata per architecture (`rpm/<codename>/<arch>/`), as dnf's
  // `$basearch` repositories are laid out; noarch packages are listed in each.
  let isPrivate = existing?.private ?? false;
  if (spec.private !== undefined) {
    if (typeof spec.private === 'boolean') isPrivate = spec.private;
    else fail('private', 'must be true or false');
  }

  const result: Distribution = {
    codename,
    format,
    description: text('description', FIELD, 200, existing?.description ?? codename),
    suite: text('suite', NAME, 50, existing?.suite ?? codename),
    origin: text('origin', FIELD, 100, existing?.origin ?? 'Tollgate'),
    label: text('label', FIELD, 100, existing?.label ?? 'Tollgate'),
    components,
    architectures,
    osvEcosystem: text('osv_ecosystem', FIELD, 100, existing?.osvEcosystem ?? '', true),
    scannerDistro: text('scanner_distro', FIELD, 100, existing?.scannerDistro ?? '', true),
    private: isPrivate,
    builtIn: existing?.builtIn ?? false,
  };
  if (problems.length > 0) throw new DistributionSpecError(problems);
  return result;
}

/** The definition as the API shows it and the start-up file writes it. */
export function specOf(d: Distribution): Required<Omit<DistributionSpec, never>> & { built_in: boolean } {
  return {
    codename: d.codename,
    format: d.format,
    description: d.description,
    suite: d.suite,
    origin: d.origin,
    label: d.label,
    components: [...d.components],
    architectures: [...d.architectures],
    osv_ecosystem: d.osvEcosystem,
    scanner_distro: d.scannerDistro,
    private: d.private,
    built_in: d.builtIn,
  };
}
