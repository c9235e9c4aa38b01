/**
 * Which package file a request names, from its URL path alone (no file or database access).
 *
 * Package files sit in the repository's pools, relative to its root:
 * `apt/pool/<component>/<prefix>/<source>/<file>.deb` and
 * `rpm/<codename>/<arch>/Packages/<letter>/[<digest>/]<file>.rpm` (a signed RPM's own folder). That relative path is also the packages
 * table's `pool_path`, so it is the lookup key. Whatever precedes it (`/repo/` for the built-in
 * server, nothing or another prefix behind a reverse proxy) is ignored. Index files (Packages,
 * Release, repodata, by-hash, keys) never match.
 */

const POOL_FILE = /(?:^|\/)(apt\/pool\/(?:[^/]+\/){3}[^/]+\.deb|rpm\/[^/]+\/[^/]+\/Packages\/(?:[^/]+\/){1,2}[^/]+\.rpm)$/;

/**
 * The repository-relative path of the package file `urlPath` asks for, or null. The path is
 * percent-decoded exactly once (apt sends `+` as `%2b`), as the server resolves it; a path that
 * does not decode, or has empty, `.` or `..` segments, names no package.
 */
export function packageFilePath(urlPath: string): string | null {
  const end = urlPath.search(/[?#]/);
  const raw = end === -1 ? urlPath : urlPath.slice(0, end);
  // A cheap refusal first: most lines of a proxy log are not package files.
  if (!/(deb|rpm)$/i.test(raw)) return null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return null;
  }
  if (/[\\\0]/.test(decoded)) return null;
  const match = POOL_FILE.exec(decoded);
  if (!match) return null;
  const path = match[1]!;
  return path.split('/').some((s) => s === '' || s === '.' || s === '..') ? null : path;
}

/**
 * Which 206 answers count as a download: only one that starts at byte 0 (the first part of a
 * download); later ranges are the same download resuming, and counting them would count it twice.
 */
export function rangeStartsAtZero(range: string | undefined): boolean {
  return typeof range === 'string' && /^bytes=0-/.test(range.trim());
}

/**
 * The one rule for what is a download, for the built-in server and proxy logs alike: a GET answered
 * 200, or 206 from byte 0 (`range` unknown, as in a log line, does not count a 206).
 */
export function countsAsDownload(method: string | null, status: number, range?: string): boolean {
  return method === 'GET' && (status === 200 || (status === 206 && rangeStartsAtZero(range)));
}
