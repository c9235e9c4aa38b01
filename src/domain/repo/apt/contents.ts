/**
 * Lines of an APT `Contents-<arch>` index, which apt-file searches: every path a package installs
 * (not its directories), then the package. Written per package, in index order, so that a new
 * package is appended like its stanza in Packages; apt-ftparchive instead sorts by path and joins
 * the packages sharing one with commas — apt-file reads both the same way (the last word of a
 * line names the packages).
 */

interface ListedFile {
  path: string;
  /** `/usr/bin/x`, from the data.tar name (`./usr/bin/x`). */
  installPath?: string;
  type: string;
}

/** apt-ftparchive's layout: the path, tabs to column 56, spaces to column 60 (at least one). */
function padded(path: string): string {
  let column = path.length;
  let out = path;
  while (column < 56) {
    out += '\t';
    column = (Math.floor(column / 8) + 1) * 8;
  }
  return out + ' '.repeat(Math.max(1, 60 - column));
}

export function contentsLines(packageName: string, files: readonly ListedFile[]): string {
  let text = '';
  for (const file of files) {
    if (file.type === 'directory') continue;
    const path = (file.installPath ?? file.path).replace(/^\.?\/+/, '');
    // A line per path: one with a line break could not be told from two.
    if (path === '' || /[\r\n]/.test(path)) continue;
    text += `${padded(path)}${packageName}\n`;
  }
  return text;
}
