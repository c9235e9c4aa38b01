/**
 * Starts a real, throwaway OpenLDAP slapd (Debian package) for tests: slapd.conf with the mdb
 * backend in a temp dir, users and groups loaded with ldapadd, optional memberOf overlay and
 * optional TLS (ldaps:// port + STARTTLS) with a self-signed certificate made by openssl.
 */
import { spawn, spawnSync } from 'node:child_process';
import { access, constants, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { makeTempDir } from './tmp.js';
import { startDaemon } from './daemon.js';
import { freePort } from '../../harness/net.js';

export const SLAPD_BINARY = '/usr/sbin/slapd';
export const BASE_DN = 'dc=example,dc=org';
export const ROOT_DN = `cn=admin,${BASE_DN}`;
export const ROOT_PASSWORD = 'root-secret';

export interface SlapdUser {
  uid: string;
  password: string;
  cn?: string;
  mail?: string;
}

export interface SlapdGroup {
  cn: string;
  /** uids of the members. */
  members: string[];
  /** Object class (default groupOfNames). posixGroup lists uids in memberUid. */
  kind?: 'groupOfNames' | 'groupOfUniqueNames' | 'posixGroup';
}

export interface SlapdOptions {
  users?: SlapdUser[];
  groups?: SlapdGroup[];
  /** Load the memberOf overlay so users carry a memberOf attribute (groupOfNames only). */
  memberOf?: boolean;
  /** Serve ldaps:// on a second port and STARTTLS on ldap://, with a self-signed certificate. */
  tls?: boolean;
}

export interface RunningSlapd {
  url: string;
  ldapsUrl?: string;
  /** PEM file of the self-signed certificate (its own CA), when tls is on. */
  caFile?: string;
  baseDn: string;
  rootDn: string;
  rootPassword: string;
  userDn(uid: string): string;
  groupDn(cn: string): string;
  output(): string;
  stop(): Promise<void>;
}

export interface TestCertificate {
  certFile: string;
  keyFile: string;
  certPem: string;
  keyPem: string;
}

/** A self-signed certificate for localhost and 127.0.0.1, made with openssl in `dir`. */
export async function createTestCertificate(dir: string, name = 'server'): Promise<TestCertificate> {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  const result = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', keyFile, '-out', certFile],
    { encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`openssl could not make a test certificate: ${result.stderr}`);
  return { certFile, keyFile, certPem: await readFile(certFile, 'utf8'), keyPem: await readFile(keyFile, 'utf8') };
}

/** Starts slapd on 127.0.0.1 free ports and loads the directory; resolves once it answers. */
export async function startSlapd(options: SlapdOptions = {}): Promise<RunningSlapd> {
  try {
    await access(SLAPD_BINARY, constants.X_OK);
  } catch {
    throw new Error(`${SLAPD_BINARY} is missing: install the Debian packages slapd and ldap-utils to run these tests`);
  }
  const { dir, cleanup } = await makeTempDir('tollgate-slapd-');
  const dbDir = join(dir, 'db');
  await mkdir(dbDir);
  const port = await freePort();
  const tlsPort = options.tls ? await freePort() : undefined;
  const cert = options.tls ? await createTestCertificate(dir) : undefined;

  const conf = [
    ...['core', 'cosine', 'inetorgperson', 'nis'].map((s) => `include /etc/ldap/schema/${s}.schema`),
    'modulepath /usr/lib/ldap',
    'moduleload back_mdb',
    ...(options.memberOf ? ['moduleload memberof'] : []),
    `pidfile ${join(dir, 'slapd.pid')}`,
    ...(cert ? [`TLSCertificateFile ${cert.certFile}`, `TLSCertificateKeyFile ${cert.keyFile}`] : []),
    'database mdb',
    'maxsize 10485760',
    `suffix "${BASE_DN}"`,
    `rootdn "${ROOT_DN}"`,
    `rootpw ${hashPassword(ROOT_PASSWORD)}`,
    `directory ${dbDir}`,
    // Like a real directory: users may not read passwords; anyone bound may search.
    'access to attrs=userPassword by self write by anonymous auth by * none',
    'access to * by * read',
    ...(options.memberOf
      ? ['overlay memberof', 'memberof-group-oc groupOfNames', 'memberof-member-ad member', 'memberof-memberof-ad memberOf', 'memberof-refint true']
      : []),
  ];
  const confFile = join(dir, 'slapd.conf');
  await writeFile(confFile, `${conf.join('\n')}\n`);

  const url = `ldap://127.0.0.1:${port}`;
  const ldapsUrl = tlsPort !== undefined ? `ldaps://127.0.0.1:${tlsPort}` : undefined;
  const listen = [`${url}/`, ...(ldapsUrl ? [`${ldapsUrl}/`] : [])].join(' ');
  const daemon = await startDaemon({
    name: 'slapd',
    binary: SLAPD_BINARY,
    // -d 0: stay in the foreground without debug output, so the child is the daemon itself.
    args: ['-d', '0', '-f', confFile, '-h', listen],
    ready: () => accepts(port),
    timeoutMs: 15_000,
    pollMs: 50,
    cleanup,
  });
  const { stop } = daemon;

  const userDn = (uid: string): string => `uid=${uid},ou=people,${BASE_DN}`;
  const groupDn = (cn: string): string => `cn=${cn},ou=groups,${BASE_DN}`;
  try {
    await ldapAdd(url, buildLdif(options, userDn, groupDn));
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    ldapsUrl,
    caFile: cert?.certFile,
    baseDn: BASE_DN,
    rootDn: ROOT_DN,
    rootPassword: ROOT_PASSWORD,
    userDn,
    groupDn,
    output: daemon.output,
    stop,
  };
}

function buildLdif(options: SlapdOptions, userDn: (uid: string) => string, groupDn: (cn: string) => string): string {
  const entries: string[][] = [
    [`dn: ${BASE_DN}`, 'objectClass: dcObject', 'objectClass: organization', 'dc: example', 'o: Example'],
    [`dn: ou=people,${BASE_DN}`, 'objectClass: organizationalUnit', 'ou: people'],
    [`dn: ou=groups,${BASE_DN}`, 'objectClass: organizationalUnit', 'ou: groups'],
  ];
  for (const user of options.users ?? []) {
    const cn = user.cn ?? user.uid;
    entries.push([
      `dn: ${userDn(user.uid)}`,
      'objectClass: inetOrgPerson',
      `uid: ${user.uid}`,
      `cn: ${cn}`,
      `sn: ${cn.split(' ').pop() ?? cn}`,
      ...(user.mail ? [`mail: ${user.mail}`] : []),
      `userPassword: ${hashPassword(user.password)}`,
    ]);
  }
  for (const group of options.groups ?? []) {
    const kind = group.kind ?? 'groupOfNames';
    const lines = [`dn: ${groupDn(group.cn)}`, `objectClass: ${kind}`, `cn: ${group.cn}`];
    if (kind === 'posixGroup') {
      lines.push(`gidNumber: ${10_000 + entries.length}`, ...group.members.map((uid) => `memberUid: ${uid}`));
    } else {
      const attr = kind === 'groupOfNames' ? 'member' : 'uniqueMember';
      // Both classes require at least one member; an empty group points at the root DN like many tools do.
      const members = group.members.length > 0 ? group.members.map(userDn) : [ROOT_DN];
      lines.push(...members.map((dn) => `${attr}: ${dn}`));
    }
    entries.push(lines);
  }
  return `${entries.map((lines) => lines.join('\n')).join('\n\n')}\n`;
}

/** {SSHA} hash made by slappasswd, the tool operators use. */
function hashPassword(password: string): string {
  const result = spawnSync('slappasswd', ['-h', '{SSHA}', '-s', password], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`slappasswd failed: ${result.stderr}`);
  return result.stdout.trim();
}

function ldapAdd(url: string, ldif: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('ldapadd', ['-x', '-H', url, '-D', ROOT_DN, '-w', ROOT_PASSWORD], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ldapadd failed (${code}):\n${output}\n${ldif}`))));
    child.stdin.end(ldif);
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(500, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

