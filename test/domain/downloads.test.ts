import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tmpdir } from 'node:os';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseCombinedLine, parseLogTime } from '../../src/domain/downloads/access-log.js';
import { creditedDistribution, SHARED } from '../../src/domain/downloads/attribution.js';
import { parseLogGlob } from '../../src/domain/downloads/log-glob.js';
import { countsAsDownload, packageFilePath } from '../../src/domain/downloads/package-path.js';
import { fillDays, lastDays } from '../../src/domain/utc-days.js';

const DEB = 'apt/pool/main/h/hello/hello_2.10-3_amd64.deb';
const RPM = 'rpm/rocky9/x86_64/Packages/h/hello-2.10-1.el9.x86_64.rpm';

describe('combined log format parser', () => {
  it('reads every field of an nginx combined line', () => {
    const e = parseCombinedLine(`203.0.113.7 - alice [25/Nov/2026:10:00:00 +0100] "GET /repo/${DEB} HTTP/1.1" 200 1234 "-" "Debian APT-HTTP/1.3 (2.6.1)"`);
    assert.ok(e);
    assert.equal(e.remote, '203.0.113.7');
    assert.equal(e.user, 'alice');
    assert.equal(e.time.toISOString(), '2026-11-25T09:00:00.000Z');
    assert.equal(e.method, 'GET');
    assert.equal(e.target, `/repo/${DEB}`);
    assert.equal(e.protocol, 'HTTP/1.1');
    assert.equal(e.status, 200);
    assert.equal(e.bytes, 1234);
    assert.equal(e.referer, null);
    assert.equal(e.userAgent, 'Debian APT-HTTP/1.3 (2.6.1)');
  });

  it('accepts IPv6 clients, a dash for bytes, and the common format without referer and agent', () => {
    const v6 = parseCombinedLine('2001:db8::1 - - [01/Jan/2026:00:00:00 +0000] "HEAD /x HTTP/2.0" 304 - "https://example.org/" "curl/8.5"');
    assert.equal(v6?.remote, '2001:db8::1');
    assert.equal(v6?.user, null);
    assert.equal(v6?.bytes, null);
    assert.equal(v6?.referer, 'https://example.org/');
    const common = parseCombinedLine('::1 - - [31/Dec/2025:23:59:59 -0500] "GET /apt/pool/x.deb HTTP/1.0" 200 10');
    assert.equal(common?.time.toISOString(), '2026-01-01T04:59:59.000Z');
    assert.equal(common?.userAgent, null);
  });

  it('undoes Apache and nginx escapes inside quoted fields', () => {
    const apache = parseCombinedLine('10.0.0.1 - - [25/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "Agent \\"quoted\\" \\\\ back"');
    assert.equal(apache?.userAgent, 'Agent "quoted" \\ back');
    const nginx = parseCombinedLine('10.0.0.1 - - [25/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "Agent \\x22quoted\\x22"');
    assert.equal(nginx?.userAgent, 'Agent "quoted"');
  });

  it('keeps lines with a garbage request line but names no method or target', () => {
    const e = parseCombinedLine('198.51.100.2 - - [25/Nov/2026:10:00:00 +0000] "\\x16\\x03\\x01\\x00" 400 157 "-" "-"');
    assert.equal(e?.status, 400);
    assert.equal(e?.method, null);
    assert.equal(e?.target, null);
    assert.equal(parseCombinedLine('198.51.100.2 - - [25/Nov/2026:10:00:00 +0000] "-" 408 0 "-" "-"')?.method, null);
  });

  it('accepts extra trailing fields and a CRLF line end', () => {
    const e = parseCombinedLine('10.0.0.1 - - [25/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "ua" 0.003 "upstream"\r');
    assert.equal(e?.userAgent, 'ua');
  });

  it('refuses malformed lines', () => {
    for (const line of [
      '',
      'garbage',
      '10.0.0.1 - - 25/Nov/2026:10:00:00 +0000 "GET / HTTP/1.1" 200 5',
      '10.0.0.1 - - [25/Nov/2026:10:00:00] "GET / HTTP/1.1" 200 5',
      '10.0.0.1 - - [32/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5',
      '10.0.0.1 - - [25/Foo/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5',
      '10.0.0.1 - - [25/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1 200 5',
      '10.0.0.1 - - [25/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 2000 5',
      '10.0.0.1 - - [25/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 five',
      '10.0.0.1 - - [25/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "unterminated',
      '10.0.0.1 - - [25/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5 "-"',
    ]) {
      assert.equal(parseCombinedLine(line), null, line);
    }
    assert.equal(parseLogTime('25/Nov/2026:24:00:00 +0000'), null);
  });
});

describe('package file paths', () => {
  it('finds the pool path behind /repo/, behind no prefix and behind another prefix', () => {
    assert.equal(packageFilePath(`/repo/${DEB}`), DEB);
    assert.equal(packageFilePath(`/${DEB}`), DEB);
    assert.equal(packageFilePath(`/mirror/tollgate/${RPM}?x=1`), RPM);
    // A signed RPM sits in a folder named by its digest.
    const signed = 'rpm/rocky9/x86_64/Packages/h/0123456789abcdef/hello-2.10-1.el9.x86_64.rpm';
    assert.equal(packageFilePath(`/repo/${signed}`), signed);
    assert.equal(packageFilePath('/repo/rpm/rocky9/x86_64/Packages/h/a/b/hello-2.10-1.el9.x86_64.rpm'), null);
  });

  it('decodes the path once, as the server does', () => {
    assert.equal(packageFilePath('/repo/apt/pool/main/a/aptly/aptly_1.5.0%2bds1-1%2bb4_amd64.deb'), 'apt/pool/main/a/aptly/aptly_1.5.0+ds1-1+b4_amd64.deb');
    assert.equal(packageFilePath('/repo/apt/pool/main/a/aptly/aptly_1%25zz_amd64.deb'), 'apt/pool/main/a/aptly/aptly_1%zz_amd64.deb');
    assert.equal(packageFilePath('/repo/apt/pool/main/a/aptly/aptly_1%zz_amd64.deb'), null);
  });

  it('does not count index files, keys, traversal or other extensions', () => {
    for (const path of [
      '/repo/apt/dists/jammy/main/binary-amd64/Packages.xz',
      '/repo/apt/dists/jammy/InRelease',
      '/repo/rpm/rocky9/x86_64/repodata/repomd.xml',
      '/repo/keys/tollgate.asc',
      '/repo/apt/pool/main/h/hello/../../x/y.deb',
      '/repo/apt/pool/main/h/hello.deb',
      '/repo/rpm/rocky9/x86_64/hello.rpm',
      '/repo/apt/pool/main/h/hello/hello.deb.sig',
    ]) {
      assert.equal(packageFilePath(path), null, path);
    }
  });

  it('counts GETs answered 200, and 206 only from byte 0', () => {
    assert.equal(countsAsDownload('GET', 200), true);
    assert.equal(countsAsDownload('HEAD', 200), false);
    assert.equal(countsAsDownload('GET', 304), false);
    assert.equal(countsAsDownload('GET', 206, 'bytes=0-99'), true);
    assert.equal(countsAsDownload('GET', 206, 'bytes=100-'), false);
    assert.equal(countsAsDownload('GET', 206), false);
  });
});

describe('download attribution', () => {
  it('credits the one distribution listing a file, and shared pool files to none', () => {
    assert.equal(creditedDistribution([]), null);
    assert.equal(creditedDistribution([{ distribution: 'jammy', status: 'published' }]), 'jammy');
    assert.equal(creditedDistribution([{ distribution: 'jammy', status: 'published' }, { distribution: 'noble', status: 'pending_review' }]), 'jammy');
    assert.equal(creditedDistribution([{ distribution: 'jammy', status: 'published' }, { distribution: 'noble', status: 'accepted_risk' }]), SHARED);
    assert.equal(creditedDistribution([{ distribution: 'jammy', status: 'quarantined' }]), 'jammy');
  });
});

describe('ACCESS_LOG_PATH globs and UTC days', () => {
  it('matches rotated and gzipped names in a fixed folder', () => {
    const glob = parseLogGlob('/var/log/nginx/access.log*');
    assert.equal(glob.dir, '/var/log/nginx');
    for (const name of ['access.log', 'access.log.1', 'access.log.2.gz']) assert.ok(glob.matches(name), name);
    assert.ok(!glob.matches('error.log'));
    assert.ok(parseLogGlob('/logs/repo-[ab].log.?').matches('repo-a.log.1'));
    assert.throws(() => parseLogGlob('/var/log/*/access.log'), /folder/);
  });

  it('is checked when the configuration is read', () => {
    const env = { DATA_DIR: tmpdir(), JWT_SECRET_KEY: 'k'.repeat(40) };
    assert.equal(loadConfig(env).accessLogPath, null);
    assert.equal(loadConfig({ ...env, ACCESS_LOG_PATH: '/var/log/nginx/access.log*' }).accessLogPath, '/var/log/nginx/access.log*');
    assert.throws(() => loadConfig({ ...env, ACCESS_LOG_PATH: '/var/log/*/access.log' }), ConfigError);
  });

  it('lists every day of a window and fills the missing ones', () => {
    const w = lastDays(3, new Date('2026-03-01T10:00:00Z'));
    assert.deepEqual(w, { from: '2026-02-27', to: '2026-03-01', days: ['2026-02-27', '2026-02-28', '2026-03-01'] });
    assert.deepEqual(fillDays(w.days, [{ day: '2026-02-28', n: 4 }], (day) => ({ day, n: 0 })).map((d) => d.n), [0, 4, 0]);
  });
});
