import type { PackageRow } from '../../adapters/db/packages.table.js';
import { isIndexed, type Distribution } from '../../domain/distributions.js';
import { DomainError } from '../../domain/errors.js';
import { rpmTreeRoot } from '../../domain/repo/rpm/tree.js';
import { shellQuote as q } from '../../domain/shell.js';
import { latestRow } from './catalog.js';

/**
 * The row install instructions are for: only a version the distribution's index serves can be
 * installed. Asked for one version, that version or 409 `not_published` naming its status; else
 * the newest version in an index.
 */
export function installableRow(rows: readonly PackageRow[], requestedVersion?: string): PackageRow {
  const indexed = rows.filter((r) => isIndexed(r.status));
  // A binary package is installed rather than its same-named source package fetched.
  const binaries = indexed.filter((r) => r.arch !== 'source');
  if (indexed.length > 0) return latestRow(binaries.length > 0 ? binaries : indexed);
  const row = latestRow(rows);
  const what = requestedVersion ? `${row.name} ${row.version}` : `No version of ${row.name}`;
  const states = [...new Set(rows.map((r) => `${r.distribution}: ${r.status}`))].join(', ');
  throw new DomainError('conflict', 'not_published', `${what} is not in a published index (${states}), so it cannot be installed`, {
    name: row.name,
    statuses: rows.map((r) => ({ version: r.version, distribution: r.distribution, arch: r.arch, status: r.status })),
  });
}

/**
 * The exact client set-up and install commands for a package. Users paste them
 * into a root shell, so every value placed in a command goes through shellQuote, and file
 * contents are passed as one quoted printf argument rather than a here-document (which a line
 * equal to its delimiter would end early).
 */
export function installInstructions(baseUrl: string, dist: Distribution, row: Pick<PackageRow, 'name' | 'version' | 'arch'>, username: string) {
  const repo = `${baseUrl}/repo`;
  // A private distribution is read with the user's API token as the HTTP Basic password. The
  // token itself is never part of the answer: the commands read it from $TOLLGATE_TOKEN.
  // apt uses an auth.conf entry without a scheme for https only; over http the entry names it.
  const host = repo.replace(/^https:\/\//, '');
  if (dist.format === 'deb') {
    const keyring = '/usr/share/keyrings/tollgate.gpg';
    const keyUrl = `${repo}/keys/tollgate.gpg`;
    // A source package (arch `source`) is read through a deb-src line and fetched with apt-get source.
    const isSource = row.arch === 'source';
    const sourceLine = `${isSource ? 'deb-src' : 'deb'} [signed-by=${keyring}] ${repo}/apt ${dist.codename} ${dist.components.join(' ')}`;
    const authFile = `/etc/apt/auth.conf.d/tollgate-${dist.codename}.conf`;
    return {
      format: 'deb',
      distribution: dist.codename,
      key_url: keyUrl,
      source_line: sourceLine,
      auth_conf: dist.private ? `machine ${host}/apt/dists/${dist.codename}/ login ${username} password <API token>\nmachine ${host}/apt/pool/ login ${username} password <API token>\n` : undefined,
      commands: [
        ...(dist.private
          ? [`printf 'machine %s login %s password %s\\n' ${q(`${host}/apt/dists/${dist.codename}/`)} ${q(username)} "$TOLLGATE_TOKEN" ${q(`${host}/apt/pool/`)} ${q(username)} "$TOLLGATE_TOKEN" | sudo tee ${q(authFile)} > /dev/null && sudo chmod 600 ${q(authFile)}`]
          : []),
        `curl -fsSL ${q(keyUrl)} | sudo tee ${q(keyring)} > /dev/null`,
        `printf '%s\\n' ${q(sourceLine)} | sudo tee ${q(`/etc/apt/sources.list.d/tollgate-${dist.codename}${isSource ? '-src' : ''}.list`)}`,
        'sudo apt-get update',
        isSource ? `apt-get source ${q(`${row.name}=${row.version}`)}` : `sudo apt-get install ${q(`${row.name}=${row.version}`)}`,
      ],
    };
  }
  const id = `tollgate-${dist.codename}`;
  const repoFile = [
    `[${id}]`,
    `name=Tollgate ${dist.description}`,
    // Several architectures: one tree each, the client's own chosen by dnf's $basearch.
    `baseurl=${repo}/${dist.architectures.length > 1 ? rpmTreeRoot(dist, '$basearch') : rpmTreeRoot(dist)}`,
    'enabled=1',
    ...(dist.private ? [`username=${username}`, 'password=<API token>'] : []),
    // Both are signed with the repository key: the metadata (repomd.xml.asc) and every package.
    'gpgcheck=1',
    'repo_gpgcheck=1',
    `gpgkey=${repo}/keys/tollgate.asc`,
    '',
  ].join('\n');
  return {
    format: 'rpm',
    distribution: dist.codename,
    key_url: `${repo}/keys/tollgate.asc`,
    repo_file: repoFile,
    commands: [
      dist.private
        ? `printf '%s' ${q(repoFile)} | sed "s|<API token>|$TOLLGATE_TOKEN|" | sudo tee ${q(`/etc/yum.repos.d/${id}.repo`)} > /dev/null && sudo chmod 600 ${q(`/etc/yum.repos.d/${id}.repo`)}`
        : `printf '%s' ${q(repoFile)} | sudo tee ${q(`/etc/yum.repos.d/${id}.repo`)} > /dev/null`,
      `sudo dnf install ${q(`${row.name}-${row.version.replace(/^\d+:/, '')}.${row.arch}`)}`,
    ],
  };
}
