/**
 * ACCESS_LOG_PATH: a folder and a file-name pattern (`/var/log/nginx/access.log*`). Wildcards
 * (`*`, `?`, `[abc]`) are allowed in the file name only: rotation renames files within one folder,
 * and a fixed folder keeps the listing to one readdir.
 */
import { DomainError } from '../errors.js';

export interface LogGlob {
  dir: string;
  matches(fileName: string): boolean;
}

function patternToRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close === -1) {
        out += '\\[';
        continue;
      }
      const body = pattern.slice(i + 1, close).replace(/\\/g, '\\\\').replace(/^!/, '^');
      out += `[${body}]`;
      i = close;
    } else out += c.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

export function parseLogGlob(pattern: string): LogGlob {
  const slash = pattern.lastIndexOf('/');
  const dir = slash === -1 ? '.' : slash === 0 ? '/' : pattern.slice(0, slash);
  const name = pattern.slice(slash + 1);
  if (/[*?[]/.test(dir)) {
    throw new DomainError('invalid', 'invalid_access_log_path', `ACCESS_LOG_PATH: wildcards are allowed in the file name only, not in the folder (${pattern})`);
  }
  if (name === '') throw new DomainError('invalid', 'invalid_access_log_path', `ACCESS_LOG_PATH names a folder, not files (${pattern})`);
  const regex = patternToRegExp(name);
  return { dir, matches: (fileName) => regex.test(fileName) };
}
