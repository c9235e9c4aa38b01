import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findDistribution } from '../../../src/domain/distributions.js';
import { analysisOf } from '../../../src/domain/sbom/analysis.js';
import { GoBuildInfoScanner, goComponents, parseGoBuildInfo } from '../../../src/domain/sbom/inner/golang.js';
import { classify } from '../../../src/domain/sbom/inner/index.js';
import { parsePythonMetadata } from '../../../src/domain/sbom/inner/python.js';
import { parsePackageLock } from '../../../src/domain/sbom/inner/npm.js';
import { debCopyrightLicense, looksLikeSpdxExpression, spdxLicense } from '../../../src/domain/sbom/license.js';
import type { DocumentPlan, SbomPackage, SbomVulnerability } from '../../../src/domain/sbom/model.js';
import { documentText } from '../../../src/domain/sbom/stream.js';
import { debPurl, purl, rpmPurl, vendorOf } from '../../../src/domain/sbom/purl.js';
import { goBuildInfoBlob } from '../../helpers/go-buildinfo.js';

const dist = (codename: string) => findDistribution(codename)!;

describe('purls', () => {
  it('keeps a Debian epoch in the version, encodes + and sorts qualifiers', () => {
    assert.equal(debPurl({ name: 'dpkg', version: '1:1.21.1+deb12u1', arch: 'amd64' }, dist('bookworm')), 'pkg:deb/debian/dpkg@1:1.21.1%2Bdeb12u1?arch=amd64&distro=bookworm');
    assert.equal(debPurl({ name: 'libc6', version: '2.35-0ubuntu3~x', arch: 'amd64' }, dist('jammy')), 'pkg:deb/ubuntu/libc6@2.35-0ubuntu3~x?arch=amd64&distro=jammy');
  });
  it('puts an RPM epoch in a qualifier and names the vendor and release', () => {
    assert.equal(rpmPurl({ name: 'openssl', version: '1:3.0.7-24.el9', arch: 'x86_64' }, dist('rocky9')), 'pkg:rpm/rocky/openssl@3.0.7-24.el9?arch=x86_64&distro=rocky-9&epoch=1');
    assert.equal(rpmPurl({ name: 'curl', version: '8.0-1.fc42', arch: 'x86_64' }, dist('fedora')), 'pkg:rpm/fedora/curl@8.0-1.fc42?arch=x86_64&distro=fedora-42');
    assert.deepEqual(['almalinux9', 'centos-stream9', 'opensuse-leap-15.6', 'noble'].map((c) => vendorOf(dist(c))), ['almalinux', 'centos', 'opensuse', 'ubuntu']);
  });
  it('encodes namespaces segment by segment', () => {
    assert.equal(purl({ type: 'npm', namespace: '@babel', name: 'core', version: '7.0.0' }), 'pkg:npm/%40babel/core@7.0.0');
    assert.equal(purl({ type: 'golang', namespace: 'github.com/spf13', name: 'cobra', version: 'v1.8.0' }), 'pkg:golang/github.com/spf13/cobra@v1.8.0');
  });
});

describe('licences', () => {
  it('reads DEP-5 copyright files into an SPDX expression and ignores free-form ones', () => {
    const dep5 = 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: x\n\nFiles: *\nCopyright: 2020 A\nLicense: GPL-2+\n\nFiles: debian/*\nLicense: Expat\n\nLicense: GPL-2+\n text\n';
    assert.equal(debCopyrightLicense(dep5), 'GPL-2.0-or-later AND MIT');
    assert.match(debCopyrightLicense(dep5.replace('Expat', 'BSD-3-clause~Sun'))!, /^GPL-2.0-or-later AND LicenseRef-BSD-3-clause-Sun-[0-9a-f]+$/);
    assert.equal(debCopyrightLicense('This package was debianized by someone.\n'), null);
  });
  it('accepts SPDX expressions and refuses old RPM spellings', () => {
    assert.ok(looksLikeSpdxExpression('(MIT OR Apache-2.0) AND GPL-2.0-or-later WITH Classpath-exception-2.0'));
    assert.equal(spdxLicense('MIT AND (LGPL-2.1-or-later OR BSD-3-Clause)'), 'MIT AND (LGPL-2.1-or-later OR BSD-3-Clause)');
    assert.equal(spdxLicense('GPLv2+'), null);
    assert.equal(spdxLicense('ASL 2.0'), null);
  });
});

describe('inner components', () => {
  it('parses Go build info, also across chunk boundaries, and applies replacements', () => {
    const blob = goBuildInfoBlob('go1.21.5', ['path\texample.com/tool', 'mod\texample.com/tool\tv1.2.3\th1:x=', 'dep\tgithub.com/a/b\tv0.1.0\th1:y=', 'dep\tgolang.org/x/sys\tv0.1.0\th1:z=', '=>\tgolang.org/x/sys\tv0.2.0\th1:w=', 'build\t-compiler=gc']);
    const info = parseGoBuildInfo(blob)!;
    assert.equal(info.goVersion, 'go1.21.5');
    assert.deepEqual(info.deps.map((d) => `${d.path}@${d.version}`), ['github.com/a/b@v0.1.0', 'golang.org/x/sys@v0.2.0']);
    const file = Buffer.concat([Buffer.from('\x7fELF'), Buffer.alloc(5000), Buffer.from('\xff Go buildinf: decoy', 'latin1'), Buffer.alloc(77), blob, Buffer.alloc(3000)]);
    for (const size of [7, 100, 4096, file.length]) {
      const scanner = new GoBuildInfoScanner();
      for (let i = 0; i < file.length; i += size) scanner.push(file.subarray(i, i + size));
      assert.equal(scanner.result()?.main?.version, 'v1.2.3', `chunk size ${size}`);
    }
    const components = goComponents(info, '/usr/bin/tool');
    assert.deepEqual(components.map((c) => c.purl), ['pkg:golang/example.com/tool@v1.2.3', 'pkg:golang/github.com/a/b@v0.1.0', 'pkg:golang/golang.org/x/sys@v0.2.0']);
  });
  it('parses Python core metadata and npm lock files', () => {
    const [py] = parsePythonMetadata('Metadata-Version: 2.1\nName: Foo_Bar\nVersion: 1.0\nLicense: MIT\n\nlong text', '/x/METADATA');
    assert.equal(py!.purl, 'pkg:pypi/foo-bar@1.0');
    const lock = JSON.stringify({ lockfileVersion: 3, packages: { '': { name: 'app' }, 'node_modules/@s/a': { version: '1.0.0', license: 'ISC' }, 'node_modules/b': { version: '2.0.0' } } });
    assert.deepEqual(parsePackageLock(lock, '/l').map((c) => c.purl), ['pkg:npm/%40s/a@1.0.0', 'pkg:npm/b@2.0.0']);
  });
  it('classifies files by install path', () => {
    assert.equal(classify('/usr/lib/app/node_modules/@s/a/package.json', 0o100644, 100, 'app')?.kind, 'npm-package');
    assert.equal(classify('/usr/lib/app/package.json', 0o100644, 100, 'app'), null);
    assert.equal(classify('/usr/lib/python3/dist-packages/x-1.0.dist-info/METADATA', 0o100644, 100, 'p')?.kind, 'python');
    assert.equal(classify('/usr/share/doc/p/copyright', 0o100644, 100, 'p')?.kind, 'copyright');
    assert.equal(classify('/usr/bin/tool', 0o100755, 100_000, 'p')?.kind, 'executable');
  });
});

describe('analysis state', () => {
  const v = { id: 'CVE-1', policyAction: 'review', fixState: 'not-fixed' } as SbomVulnerability;
  const decision = (action: string) => ({ action, justification: 'why', decidedAt: '2026-11-25T00:00:00+00:00', expiresAt: null, targetVersion: '2.0', coveredCveIds: ['CVE-1'] });
  it('maps decisions and review states', () => {
    assert.deepEqual(analysisOf({ status: 'accepted_risk', decision: decision('accept_risk') }, v)?.response, ['will_not_fix']);
    assert.equal(analysisOf({ status: 'upgrade_required', decision: decision('upgrade_required') }, v)?.response?.[0], 'update');
    assert.equal(analysisOf({ status: 'pending_review', decision: null }, v)?.state, 'in_triage');
    assert.equal(analysisOf({ status: 'published', decision: null }, { ...v, policyAction: 'allow' }), null);
    assert.equal(analysisOf({ status: 'published', decision: decision('accept_risk') }, { ...v, id: 'CVE-2', policyAction: 'allow' }), null);
  });
});

describe('document streaming', () => {
  it('writes a section in pieces of about 32 KiB that join into the same JSON', async () => {
    const pkgs = Array.from({ length: 300 }, (_, i) => ({ name: `p${i}`, pad: 'x'.repeat(500) }) as unknown as SbomPackage);
    const plan: DocumentPlan = { head: { kind: 'test' }, sections: [{ key: 'items', items: (p) => [p] }, { key: 'none', items: () => [] }] };
    const pieces: string[] = [];
    for await (const piece of documentText(plan, async function* () { yield pkgs.slice(0, 150); yield pkgs.slice(150); })) pieces.push(text(piece));
    assert.ok(pieces.length > 4, `${pieces.length} pieces`);
    // No piece is a whole batch (75 KB): each stops at the first package past 32 KiB.
    assert.ok(pieces.every((p) => p.length < 32 * 1024 + 600), String(pieces.map((p) => p.length)));
    assert.deepEqual(JSON.parse(pieces.join('')), { kind: 'test', items: pkgs });
  });

  it('reads the packages once: later sections wait in the spool, as text or bytes, and follow the first', async () => {
    const pkgs = Array.from({ length: 500 }, (_, i) => ({ name: `p${i}`, pad: 'y'.repeat(200) }) as unknown as SbomPackage);
    const plan: DocumentPlan = {
      head: { kind: 'test' },
      sections: [
        { key: 'first', items: (p) => [p.name] },
        { key: 'empty', items: () => [] },
        { key: 'edges', items: (p) => [{ from: p.name, pad: (p as unknown as { pad: string }).pad }, { from: p.name, to: 'x' }] },
      ],
      leading: { edges: [{ root: true }] },
    };
    let passes = 0;
    const spooled: string[] = [];
    const bytesSpool = () => {
      const parts: Uint8Array[] = [];
      return {
        write: (piece: string) => { spooled.push(piece); parts.push(Buffer.from(piece)); },
        read: () => parts,
      };
    };
    const pieces: string[] = [];
    const batches = async function* () { passes++; for (let i = 0; i < pkgs.length; i += 100) yield pkgs.slice(i, i + 100); };
    for await (const piece of documentText(plan, batches, bytesSpool)) pieces.push(text(piece));
    assert.equal(passes, 1);
    assert.ok(spooled.length > 1 && spooled.every((p) => p.length < 32 * 1024 + 600), String(spooled.map((p) => p.length)));
    assert.deepEqual(JSON.parse(pieces.join('')), {
      kind: 'test',
      first: pkgs.map((p) => p.name),
      edges: [{ root: true }, ...pkgs.flatMap((p) => [{ from: p.name, pad: (p as unknown as { pad: string }).pad }, { from: p.name, to: 'x' }])],
    });
  });
});

const text = (piece: string | Uint8Array) => (typeof piece === 'string' ? piece : Buffer.from(piece).toString('utf8'));
