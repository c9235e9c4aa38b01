import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isChangesText, looksLikeSourceControl, parseChanges, parseDsc, stripClearSignature } from '../../../src/domain/deb/dsc.js';
import { PackageFormatError } from '../../../src/domain/errors.js';
import { packageFilePath } from '../../../src/domain/downloads/package-path.js';
import { sourcesStanza } from '../../../src/domain/repo/apt/sources-stanza.js';

const ORIG = { md5: '7898d49eaa8446869bbbe609f5b5e3ff', sha1: '2d9e164c53384fc9b2b28f68de3f0e89370beb61', sha256: 'f6baf16a06182af134715ca9e62fe630c897111fdd626e7f52e05fac333555e2' };
const DEB = { md5: 'fd7793e883096b812db714869bb121e8', sha1: '358fe898c1ffd2ddb35a82161a52258c09653fd8', sha256: 'a40872e758df8fb216d3affba794f7ff07a739c3e7e94f5fc964a0ecaca77900' };

const DSC = `Format: 3.0 (quilt)
Source: hello-src
Binary: hello-bin, hello-doc
Architecture: any all
Version: 1:2.4.1+ds1-1~acme1
Maintainer: Acme Builds <builds@acme.example>
Homepage: https://acme.example/hello
Standards-Version: 4.6.2
Build-Depends: debhelper-compat (= 13)
Package-List:
 hello-bin deb devel optional arch=any
Checksums-Sha1:
 ${ORIG.sha1} 196 hello-src_2.4.1+ds1.orig.tar.gz
 ${DEB.sha1} 604 hello-src_2.4.1+ds1-1~acme1.debian.tar.xz
Checksums-Sha256:
 ${ORIG.sha256} 196 hello-src_2.4.1+ds1.orig.tar.gz
 ${DEB.sha256} 604 hello-src_2.4.1+ds1-1~acme1.debian.tar.xz
Files:
 ${ORIG.md5} 196 hello-src_2.4.1+ds1.orig.tar.gz
 ${DEB.md5} 604 hello-src_2.4.1+ds1-1~acme1.debian.tar.xz
`;

/** As `gpg --clearsign` writes it, with a dash-escaped line in the text. */
const SIGNED = `-----BEGIN PGP SIGNED MESSAGE-----
Hash: SHA512

${DSC.replace('Homepage: https://acme.example/hello\n', 'Homepage: https://acme.example/hello\nX-Note: x\n ----- kept\n')}-----BEGIN PGP SIGNATURE-----

iQIzBAEBCgAdFiEEexample
=abcd
-----END PGP SIGNATURE-----
`;

const fails = (fn: () => unknown, pattern: RegExp) => assert.throws(fn, (e: unknown) => e instanceof PackageFormatError && pattern.test(e.message));

describe('.dsc parser', () => {
  it('reads identity, binaries and the named files with their checksums, in Files order', () => {
    const dsc = parseDsc(DSC);
    assert.deepEqual([dsc.source, dsc.version, dsc.format], ['hello-src', '1:2.4.1+ds1-1~acme1', '3.0 (quilt)']);
    assert.deepEqual(dsc.binaries, ['hello-bin', 'hello-doc']);
    assert.deepEqual(dsc.files, [
      { name: 'hello-src_2.4.1+ds1.orig.tar.gz', size: 196, ...ORIG },
      { name: 'hello-src_2.4.1+ds1-1~acme1.debian.tar.xz', size: 604, ...DEB },
    ]);
    assert.equal(dsc.control.get('Package-List'), '\n hello-bin deb devel optional arch=any');
  });

  it('strips a clear signature (armour headers, dash-escaping) and parses the signed text', () => {
    assert.ok(looksLikeSourceControl(Buffer.from(SIGNED)));
    const text = stripClearSignature(SIGNED);
    assert.ok(!text.includes('PGP'));
    assert.ok(text.startsWith('Format: 3.0 (quilt)\n'));
    assert.equal(stripClearSignature('-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nA: b\n- -----C\n-----BEGIN PGP SIGNATURE-----\nx\n-----END PGP SIGNATURE-----\n'), 'A: b\n-----C\n');
    const dsc = parseDsc(SIGNED);
    assert.equal(dsc.source, 'hello-src');
    assert.equal(dsc.files.length, 2);
    assert.equal(dsc.control.get('X-Note'), 'x\n ----- kept');
    // CRLF line ends (a signed file edited on another system) read the same.
    assert.equal(parseDsc(SIGNED.replace(/\n/g, '\r\n')).files[1]!.sha256, DEB.sha256);
  });

  it('refuses a signature block without its signed message header, and a signed message cut short', () => {
    fails(() => parseDsc(`${DSC}-----BEGIN PGP SIGNATURE-----\nxx\n-----END PGP SIGNATURE-----\n`), /signature without/);
    fails(() => parseDsc(SIGNED.slice(0, SIGNED.indexOf('-----BEGIN PGP SIGNATURE-----'))), /without its signature block/);
  });

  it('requires Format, Source, Version, Files and Checksums-Sha256', () => {
    for (const field of ['Format', 'Source', 'Version']) fails(() => parseDsc(DSC.replace(new RegExp(`^${field}: .*\\n`, 'm'), '')), new RegExp(`${field}: field missing`));
    fails(() => parseDsc(DSC.replace(/^Checksums-Sha256:\n( .*\n){2}/m, '')), /Checksums-Sha256: field missing/);
    fails(() => parseDsc(DSC.replace(/^Files:\n( .*\n){2}/m, '')), /Files: field missing/);
  });

  it('refuses lists that disagree, unsafe file names, duplicates and invalid identities', () => {
    fails(() => parseDsc(DSC.replace(` ${DEB.md5} 604 `, ` ${DEB.md5} 605 `)), /disagree/);
    fails(() => parseDsc(DSC.replace(` ${DEB.sha1} 604 hello-src_2.4.1+ds1-1~acme1.debian.tar.xz\n`, '')), /name different files/);
    fails(() => parseDsc(DSC.replaceAll('hello-src_2.4.1+ds1.orig.tar.gz', '../etc/passwd')), /invalid file name/);
    fails(() => parseDsc(DSC.replaceAll('hello-src_2.4.1+ds1-1~acme1.debian.tar.xz', 'hello-src_2.4.1+ds1.orig.tar.gz')), /listed twice/);
    fails(() => parseDsc(DSC.replace('Source: hello-src', 'Source: Hello_Src')), /invalid package name/);
    fails(() => parseDsc(DSC.replace('Version: 1:2.4.1+ds1-1~acme1', 'Version: 1:2.4 1')), /invalid version/);
    fails(() => parseDsc(DSC.replace('Format: 3.0 (quilt)', 'Format: whatever')), /unknown source format/);
    fails(() => parseDsc(`${DSC}\nSource: second\n`), /one paragraph/);
  });

  it('reads a source-only .changes (five-column Files) and tells it from a .dsc', () => {
    const changes = `Format: 1.8
Date: Thu, 26 Nov 2026 10:00:00 +0000
Source: hello-src
Architecture: source
Version: 1:2.4.1+ds1-1~acme1
Distribution: unstable
Changes:
 hello-src (1:2.4.1+ds1-1~acme1) unstable; urgency=medium
Checksums-Sha256:
 ${ORIG.sha256} 196 hello-src_2.4.1+ds1.orig.tar.gz
Files:
 ${ORIG.md5} 196 devel optional hello-src_2.4.1+ds1.orig.tar.gz
`;
    assert.ok(isChangesText(changes));
    assert.ok(!isChangesText(DSC));
    const parsed = parseChanges(changes);
    assert.deepEqual(parsed.files, [{ name: 'hello-src_2.4.1+ds1.orig.tar.gz', size: 196, md5: ORIG.md5, sha1: null, sha256: ORIG.sha256 }]);
  });
});

describe('Sources stanza', () => {
  it('is written as apt-ftparchive sources writes it: Package first, Directory, the .dsc first in every checksum list', () => {
    const dsc = parseDsc(DSC.replace('Binary: hello-bin, hello-doc\n', 'Binary: hello-bin, hello-doc\nPriority: optional\nStatus: x\nX-Custom: y\n'));
    const facts = (n: number) => ({ md5: 'a'.repeat(32), sha1: 'b'.repeat(40), sha256: 'c'.repeat(64), sha512: String(n).repeat(128) });
    const stanza = sourcesStanza(
      dsc.control.fields.map((f) => [f.name, f.value] as const),
      { name: 'hello-src_2.4.1+ds1-1~acme1.dsc', size: 874, ...facts(1) },
      dsc.files.map((f, i) => ({ ...f, ...facts(i + 2) })),
      'pool/main/h/hello-src',
    );
    const names = [...stanza.matchAll(/^([^ \n][^:]*):/gm)].map((m) => m[1]);
    assert.deepEqual(names, ['Package', 'Format', 'Binary', 'Architecture', 'Version', 'Maintainer', 'Standards-Version', 'Build-Depends', 'Homepage', 'Directory', 'Package-List', 'Files', 'Checksums-Sha1', 'Checksums-Sha256', 'Checksums-Sha512', 'X-Custom']);
    assert.match(stanza, /^Package: hello-src\n/);
    assert.match(stanza, /\nFiles:\n a{32} 874 hello-src_2\.4\.1\+ds1-1~acme1\.dsc\n a{32} 196 hello-src_2\.4\.1\+ds1\.orig\.tar\.gz\n a{32} 604 hello-src_2\.4\.1\+ds1-1~acme1\.debian\.tar\.xz\n/);
    assert.match(stanza, /\nChecksums-Sha512:\n 1{128} 874 .*\.dsc\n 2{128} 196 .*orig\.tar\.gz\n 3{128} 604 .*debian\.tar\.xz\nX-Custom: y\n$/);
  });
});

describe('download paths of source files', () => {
  it('name no package file (downloads count .deb and .rpm only) and do not throw', () => {
    for (const path of ['/repo/apt/pool/main/h/hello-src/hello-src_2.4.1+ds1-1~acme1.dsc', '/repo/apt/pool/main/h/hello-src/hello-src_2.4.1%2bds1.orig.tar.gz', '/repo/apt/dists/jammy/main/source/Sources.xz']) {
      assert.equal(packageFilePath(path), null, path);
    }
  });
});
