/**
 * The `<package>` element of filelists.xml for one package: every file, with dirs and ghosts
 * typed, in header order, as createrepo_c writes it.
 */
import { repoArch, versionAttrs, type RepoPackageInput } from './types.js';
import { attrs, textElement } from './xml.js';

/** The filelists.xml chunk for one package, ending with a newline. */
export function filelistsPackageXml(input: RepoPackageInput): string {
  const { pkg } = input;
  const lines = [
    `<package${attrs([['pkgid', input.checksum], ['name', pkg.name], ['arch', repoArch(pkg)]])}>`,
    `  <version${attrs(versionAttrs(pkg))}/>`,
  ];
  for (const file of pkg.files) {
    const type = file.type === 'file' ? '' : attrs([['type', file.type]]);
    lines.push(`  ${textElement('file', file.path, type)}`);
  }
  lines.push('</package>');
  return lines.join('\n') + '\n';
}
