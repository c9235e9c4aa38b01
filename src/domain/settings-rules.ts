/**
 * Rules on setting values that a JSON schema cannot state: URLs that end up in shell commands,
 * and local paths that must stay inside a folder the operator allowed. Pure: the allowed folders
 * are passed in (src/config.ts reads them from FEEDS_DIR and CA_BUNDLE_DIR).
 */
import { isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folders local files may be read from; null = none allowed. */
export interface AllowedDirs {
  feedsDir: string | null;
  caBundleDir: string | null;
}

// Host (name, IPv4 or bracketed IPv6), optional port, optional path of URL characters that no
// shell gives a meaning to: no quotes, spaces, $ ` ; & | < > ( ) * ? [ ] { } ! # \ or newlines.
const APP_URL_FORM = /^https?:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?(\/[A-Za-z0-9._~%/+=,:-]*)?$/;

/**
 * The public URL (APP_URL, setting `app_url`) goes into reset links and the install commands
 * users paste into a root shell: an absolute http(s) URL without credentials, query, fragment or
 * any character a shell interprets. Answers what is wrong, or null.
 */
export function appUrlProblem(value: string): string | null {
  const explain = 'must be an absolute http:// or https:// URL without credentials, query, fragment, quotes, spaces or shell metacharacters';
  if (!APP_URL_FORM.test(value)) return explain;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return explain;
  }
  if (url.hostname === '' || url.username !== '' || url.password !== '') return explain;
  return null;
}

/** The form of an app URL every use expects: no trailing slash (`${base}/repo`). */
export const normaliseAppUrl = (value: string): string => value.replace(/\/+$/, '');

/**
 * True when `path` names something strictly inside `dir`, by the names alone (`..` resolved,
 * symbolic links not: the adapter that opens the file checks real paths again).
 */
export function isInsideDir(dir: string, path: string): boolean {
  if (!isAbsolute(path)) return false;
  const rel = relative(resolve(dir), resolve(path));
  return rel !== '' && rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel);
}

/**
 * A feed URL (vuln_feeds[].url, epss_url, kev_url): http(s), or file:// under FEEDS_DIR only.
 * Checked by name here; whether the file exists is never told (that would probe the disk).
 */
export function feedUrlProblem(value: string, dirs: AllowedDirs): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.hostname === '' ? 'has no host' : null;
  if (url.protocol !== 'file:') return 'must be an http://, https:// or file:// URL';
  if (!dirs.feedsDir) return 'is a file:// URL, which is refused unless FEEDS_DIR is set';
  let path: string;
  try {
    path = fileURLToPath(url);
  } catch {
    return 'is not a local file:// URL';
  }
  return isInsideDir(dirs.feedsDir, path) ? null : 'must name a file under FEEDS_DIR';
}

/** ca_bundle_path: an absolute path under CA_BUNDLE_DIR (a CA bundle decides whom TLS trusts). */
export function caBundlePathProblem(value: string, dirs: AllowedDirs): string | null {
  if (!dirs.caBundleDir) return 'is refused unless CA_BUNDLE_DIR is set';
  return isInsideDir(dirs.caBundleDir, value) ? null : 'must be an absolute path under CA_BUNDLE_DIR';
}
