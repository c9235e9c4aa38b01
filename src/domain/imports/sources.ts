/**
 * Import source definitions: what a maintainer may configure, checked before anything is stored.
 * The upstream's key is the trust anchor of every imported package, so a source without one
 * exists only when `allow_unsigned` says so explicitly.
 */
import { findDistribution } from '../distributions.js';
import { DomainError } from '../errors.js';

export type SourceType = 'apt' | 'rpm';

export interface SourceInput {
  name?: string;
  type?: SourceType;
  url?: string | null;
  suite?: string | null;
  components?: string[] | null;
  architectures?: string[] | null;
  baseurl?: string | null;
  key?: string | null;
  allow_unsigned?: boolean;
  distribution?: string;
}

export interface SourceDefinition {
  name: string;
  type: SourceType;
  url: string | null;
  suite: string | null;
  components: string[];
  architectures: string[];
  baseurl: string | null;
  key: string | null;
  allowUnsigned: boolean;
  distribution: string;
}

const invalid = (code: string, message: string, field: string) =>
  new DomainError('invalid', code, message, { errors: [{ loc: ['body', field], msg: message }] });

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** Suites and components become URL path segments: no '..', no URL syntax. */
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._+~-]{0,99}$/;
const SUITE = /^[A-Za-z0-9][A-Za-z0-9._+~/-]{0,99}$/;

/** An http(s) base URL without credentials, query or fragment; answered without a trailing '/'. */
export function checkUpstreamUrl(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('invalid_url', `${field} is not a URL`, field);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('invalid_url', `${field} must be an http:// or https:// URL`, field);
  if (url.username || url.password) throw invalid('invalid_url', `${field} must not carry credentials`, field);
  if (url.search || url.hash) throw invalid('invalid_url', `${field} must not have a query or fragment`, field);
  return url.toString().replace(/\/+$/, '');
}

/** Merges `input` over `base` (an update) or over nothing (a creation) and checks the result. */
export function defineSource(input: SourceInput, base: SourceDefinition | null = null): SourceDefinition {
  const pick = <K extends keyof SourceInput>(key: K, fallback: SourceInput[K]): SourceInput[K] => (input[key] !== undefined ? input[key] : fallback);
  const name = pick('name', base?.name);
  const type = pick('type', base?.type);
  const distribution = pick('distribution', base?.distribution);
  if (!name || !NAME.test(name)) throw invalid('invalid_source', 'name: letters, digits, ".", "_" or "-", at most 100', 'name');
  if (type !== 'apt' && type !== 'rpm') throw invalid('invalid_source', 'type must be "apt" or "rpm"', 'type');
  if (!distribution) throw invalid('invalid_source', 'distribution is required', 'distribution');
  const dist = findDistribution(distribution);
  if (!dist) throw invalid('unknown_distribution', `Unknown distribution ${distribution}`, 'distribution');
  if (dist.format !== (type === 'apt' ? 'deb' : 'rpm')) {
    throw invalid('format_mismatch', `${type} sources import into ${type === 'apt' ? 'deb' : 'rpm'} distributions; ${distribution} is ${dist.format}`, 'distribution');
  }
  const allowUnsigned = pick('allow_unsigned', base?.allowUnsigned) ?? false;
  const rawKey = pick('key', base?.key);
  const key = rawKey === null || rawKey === undefined || rawKey.trim() === '' ? null : rawKey.trim();
  if (key === null && !allowUnsigned) {
    throw invalid('key_required', 'key (the upstream\'s armored OpenPGP public key) is required unless allow_unsigned is true', 'key');
  }
  if (key !== null && !key.includes('-----BEGIN PGP PUBLIC KEY BLOCK-----')) {
    throw invalid('invalid_key', 'key must be an ASCII-armored OpenPGP public key block', 'key');
  }
  if (type === 'apt') {
    const url = pick('url', base?.url);
    const suite = pick('suite', base?.suite);
    if (!url) throw invalid('invalid_source', 'url is required for apt sources', 'url');
    if (!suite || !SUITE.test(suite) || suite.split('/').includes('..')) throw invalid('invalid_source', 'suite is required: a suite or codename such as "bookworm"', 'suite');
    const components = pick('components', base?.components) ?? ['main'];
    const architectures = pick('architectures', base?.architectures) ?? [...dist.architectures];
    checkWords(components, 'components');
    checkWords(architectures, 'architectures');
    return { name, type, url: checkUpstreamUrl(url, 'url'), suite, components, architectures, baseurl: null, key, allowUnsigned, distribution };
  }
  const baseurl = pick('baseurl', base?.baseurl);
  if (!baseurl) throw invalid('invalid_source', 'baseurl is required for rpm sources', 'baseurl');
  return { name, type, url: null, suite: null, components: [], architectures: [], baseurl: checkUpstreamUrl(baseurl, 'baseurl'), key, allowUnsigned, distribution };
}

function checkWords(values: string[], field: string): void {
  if (values.length === 0 || values.length > 20) throw invalid('invalid_source', `${field}: between 1 and 20 entries`, field);
  for (const value of values) {
    if (!SEGMENT.test(value)) throw invalid('invalid_source', `${field}: ${JSON.stringify(value.slice(0, 50))} is not a valid name`, field);
  }
}
