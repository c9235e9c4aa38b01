/**
 * The `<package type="rpm">` element of primary.xml for one package, written as createrepo_c
 * writes it (same elements, order, attributes and indentation).
 */
import { primaryDependencies, isPrimaryFile, type PrimaryDependency } from './deps.js';
import { repoArch, versionAttrs, type RepoPackageInput } from './types.js';
import { attrs, escapeText, textElement } from './xml.js';

const DEP_ELEMENTS = [
  'provides',
  'requires',
  'conflicts',
  'obsoletes',
  'suggests',
  'enhances',
  'recommends',
  'supplements',
] as const;

function entryXml(dep: PrimaryDependency, isRequires: boolean): string {
  const pairs: [string, string | undefined][] = [['name', dep.name]];
  // createrepo_c writes epoch/ver/rel only for versioned (flagged) entries.
  if (dep.flags) pairs.push(['flags', dep.flags], ['epoch', dep.epoch], ['ver', dep.ver], ['rel', dep.rel]);
  if (isRequires && dep.pre) pairs.push(['pre', '1']);
  return `<rpm:entry${attrs(pairs)}/>`;
}

/** The primary.xml chunk for one package, ending with a newline. */
export function primaryPackageXml(input: RepoPackageInput): string {
  const { pkg } = input;
  const lines: string[] = [
    '<package type="rpm">',
    `  ${textElement('name', pkg.name)}`,
    `  ${textElement('arch', repoArch(pkg))}`,
    `  <version${attrs(versionAttrs(pkg))}/>`,
    `  <checksum type="sha256" pkgid="YES">${escapeText(input.checksum)}</checksum>`,
    `  ${textElement('summary', pkg.summary)}`,
    `  ${textElement('description', pkg.description)}`,
    `  ${textElement('packager', pkg.packager)}`,
    `  ${textElement('url', pkg.url)}`,
    `  <time${attrs([['file', input.fileTime], ['build', pkg.buildTime]])}/>`,
    `  <size${attrs([['package', pkg.packageSize], ['installed', pkg.installedSize], ['archive', pkg.archiveSize]])}/>`,
    `  <location${attrs([['href', input.locationHref]])}/>`,
    '  <format>',
    `    ${textElement('rpm:license', pkg.license)}`,
    `    ${textElement('rpm:vendor', pkg.vendor)}`,
    `    ${textElement('rpm:group', pkg.group)}`,
    `    ${textElement('rpm:buildhost', pkg.buildHost)}`,
    `    ${textElement('rpm:sourcerpm', pkg.sourceRpm)}`,
    `    <rpm:header-range${attrs([['start', pkg.headerStart], ['end', pkg.headerEnd]])}/>`,
  ];
  const deps = primaryDependencies(pkg);
  for (const kind of DEP_ELEMENTS) {
    const list = deps[kind].filter((d) => d.name !== '');
    if (list.length === 0) continue;
    lines.push(`    <rpm:${kind}>`);
    for (const dep of list) lines.push(`      ${entryXml(dep, kind === 'requires')}`);
    lines.push(`    </rpm:${kind}>`);
  }
  for (const file of pkg.files) {
    if (!isPrimaryFile(file.path)) continue;
    const type = file.type === 'file' ? '' : attrs([['type', file.type]]);
    lines.push(`    ${textElement('file', file.path, type)}`);
  }
  lines.push('  </format>', '</package>');
  return lines.join('\n') + '\n';
}
