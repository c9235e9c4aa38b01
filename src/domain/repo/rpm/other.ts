/**
 * The `<package>` element of other.xml for one package: its changelog, as createrepo_c writes it.
 *
 * Like createrepo_c: only the newest `changelogLimit` entries (default 10, createrepo_c's
 * default), written oldest first; trailing spaces trimmed from authors; entries sharing a
 * timestamp get their dates nudged up by one second each so that dates stay distinct.
 */
import type { RpmChangelogEntry } from '../../rpm/package.js';
import { repoArch, versionAttrs, type RepoPackageInput } from './types.js';
import { attrs, textElement } from './xml.js';

/** createrepo_c's default `--changelog-limit`. */
export const DEFAULT_CHANGELOG_LIMIT = 10;

/** The changelog entries other.xml lists, in output order. */
export function otherChangelog(entries: readonly RpmChangelogEntry[], limit = DEFAULT_CHANGELOG_LIMIT): RpmChangelogEntry[] {
  // Built newest-first from the header, then emitted in reverse (createrepo_c prepends to a list).
  const picked: RpmChangelogEntry[] = [];
  let lastTime = 0;
  for (const entry of entries.slice(0, Math.max(0, limit))) {
    const author = entry.author.length > 1 ? entry.author.slice(0, 1) + entry.author.slice(1).replace(/ +$/, '') : entry.author;
    picked.push({ time: entry.time, author, text: entry.text });
    if (entry.time === lastTime) {
      // Walk back over the older-in-output (earlier in header) entries with the same date.
      let t = entry.time;
      for (let i = picked.length - 2; i >= 0 && picked[i]!.time === t; i--) {
        picked[i]!.time += 1;
        t += 1;
      }
    } else {
      lastTime = entry.time;
    }
  }
  return picked.reverse();
}

/** The other.xml chunk for one package, ending with a newline. */
export function otherPackageXml(input: RepoPackageInput, changelogLimit = DEFAULT_CHANGELOG_LIMIT): string {
  const { pkg } = input;
  const lines = [
    `<package${attrs([['pkgid', input.checksum], ['name', pkg.name], ['arch', repoArch(pkg)]])}>`,
    `  <version${attrs(versionAttrs(pkg))}/>`,
  ];
  for (const entry of otherChangelog(pkg.changelog, changelogLimit)) {
    lines.push(`  ${textElement('changelog', entry.text, attrs([['author', entry.author], ['date', entry.time]]))}`);
  }
  lines.push('</package>');
  return lines.join('\n') + '\n';
}
