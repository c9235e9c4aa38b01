/**
 * SBOM endpoints (issue 10) with real packages built by dpkg-deb and rpmbuild: every document is
 * validated (CycloneDX strict schema, SPDX 2.3 checks, SARIF 2.1.0 schema; see helpers/sbom-validate).
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb, type DebSpec } from '../../harness/debs.js';
import { fakeGoBinary } from '../helpers/go-buildinfo.js';
import { multipartBody } from '../../harness/multipart.js';
import { buildRpm, type RpmSpec } from '../../harness/rpms.js';
import { cyclonedxProblems, sarifProblems, spdxProblems } from '../helpers/sbom-validate.js';
import { makeTempDir } from '../helpers/tmp.js';
import type { StoredFinding } from '../../src/domain/security/policy.js';

const DEP5 = 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: sbom-app\n\nFiles: *\nCopyright: 2026 Example\nLicense: GPL-2+\n\nFiles: vendor/*\nCopyright: 2026 Other\nLicense: Expat\n';
const jar = Buffer.from(zipSync({
  'META-INF/MANIFEST.MF': strToU8('Manifest-Version: 1.0\n'),
  'META-INF/maven/org.example/widget/pom.properties': strToU8('#Generated\ngroupId=org.example\nartifactId=widget\nversion=3.1.4\n'),
}));
const FINDING: StoredFinding = {
  cve_id: 'CVE-2026-1111', advisory_id: 'DSA-9999-1', severity: 'high', severity_source: 'cvss_v3', cvss_score: 7.5,
  cvss_vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H', epss: 0.42, epss_percentile: 0.97, in_kev: true,
  affected_component: 'sbom-app', installed_version: '1:2.0+dfsg-1', fixed_version: '1:2.0+dfsg-2', fix_state: 'fixed', summary: 'Denial of service', action: 'review',
};
const INNER_FINDING: StoredFinding = { ...FINDING, cve_id: 'CVE-2026-2222', severity: 'critical', cvss_score: 9.8, in_kev: false, affected_component: 'pkg:npm/left-pad@1.3.0', installed_version: '1.3.0', action: 'allow' };

for (const backend of backends()) {
  describe(`SBOM endpoints (${backend})`, () => {
    let t: TestApp;
    let admin: string;
    let auditor: string;
    let work: { dir: string; cleanup: () => Promise<void> };
    const get = (url: string, token = auditor) => t.app.inject({ method: 'GET', url, headers: bearer(token) });
    const upload = async (path: string, distribution: string) => {
      const form = await multipartBody({ distribution }, { path });
      const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
      assert.equal(res.statusCode, 201, res.body);
    };
    const deb = async (spec: DebSpec) => {
      const dir = join(work.dir, spec.name);
      await mkdir(dir, { recursive: true });
      await upload(await buildDeb(dir, spec), 'bookworm');
    };
    const rpm = async (spec: RpmSpec) => upload(await buildRpm(work.dir, { noAutoReqProv: true, ...spec }), 'rocky9');

    before(async () => {
      work = await makeTempDir('tollgate-sbom-');
      t = await startTestApp({ backend });
      admin = await t.tokenFor('admin');
      auditor = await t.tokenFor('auditor');
      await deb({ name: 'sbom-base', version: '1.0-1', provides: 'sbom-virtual' });
      await deb({
        name: 'sbom-app', version: '1:2.0+dfsg-1', depends: 'sbom-base (>= 1.0), missing-thing | sbom-virtual', maintainer: 'Jane Doe <jane@example.org>',
        description: 'An app for SBOM tests\n It embeds things.', extraControl: { Homepage: 'https://example.org/sbom-app' },
        files: {
          'usr/share/doc/sbom-app/copyright': DEP5,
          'usr/lib/sbom-app/node_modules/left-pad/package.json': JSON.stringify({ name: 'left-pad', version: '1.3.0', license: 'WTFPL' }),
          'usr/lib/sbom-app/node_modules/@scope/util/package.json': JSON.stringify({ name: '@scope/util', version: '0.2.0', license: { type: 'MIT' } }),
          'usr/lib/python3/dist-packages/requests-2.31.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: requests\nVersion: 2.31.0\nLicense: Apache 2.0\n\nbody\n',
          'usr/lib/python3/dist-packages/six-1.16.0.egg-info': 'Metadata-Version: 1.2\nName: six\nVersion: 1.16.0\nLicense: MIT\n',
          'usr/share/java/widget.jar': jar,
          'usr/bin/sbom-tool': { content: fakeGoBinary('go1.21.5', ['path\texample.com/sbom-tool', 'mod\texample.com/sbom-tool\tv0.9.0\t', 'dep\tgithub.com/spf13/cobra\tv1.8.0\th1:a=']), mode: 0o755 },
        },
      });
      await rpm({ name: 'sbom-rpm', version: '4.2', release: '1.el9', epoch: 3, license: 'MIT AND Apache-2.0', vendor: 'Example Corp', url: 'https://example.com/rpm', requires: ['sbom-rpm-lib'], files: { '/usr/share/sbom-rpm/Cargo.lock': '[[package]]\nname = "serde"\nversion = "1.0.190"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n' } });
      await rpm({ name: 'sbom-rpm-lib', version: '1.0', license: 'GPLv2+', files: { '/usr/share/sbom-rpm-lib/x': 'x\n' } });
      // Findings and a decision as the scanner and a review would have stored them.
      const row = await t.ctx.db.selectFrom('packages').select(['id']).where('name', '=', 'sbom-app').executeTakeFirstOrThrow();
      const findings = [FINDING, INNER_FINDING];
      await t.ctx.db.updateTable('packages').set({ status: 'accepted_risk', findings: JSON.stringify({ counts: { critical: 1, high: 1, medium: 0, low: 0, negligible: 0 }, details: findings }) }).where('id', '=', row.id).execute();
      await t.ctx.db.insertInto('package_findings').values(findings.map((f) => ({
        package_id: row.id, cve_id: f.cve_id, severity: f.severity, severity_rank: f.severity === 'critical' ? 4 : 3, cvss_score: f.cvss_score, epss: f.epss, in_kev: f.in_kev ? 1 : 0, fix_state: f.fix_state, data: JSON.stringify(f),
      }))).execute();
      await t.ctx.db.insertInto('security_decisions').values({
        name: 'sbom-app', version: '1:2.0+dfsg-1', arch: 'amd64', action: 'accept_risk', justification: 'Not reachable in our deployment', expires_at: null, target_version: null,
        cve_ids: '[]', covered_cve_ids: JSON.stringify(['CVE-2026-1111']), decided_by: 'admin', decided_at: '2026-11-25T10:00:00+00:00',
      }).execute();
    });
    after(async () => {
      await t?.close();
      await work?.cleanup();
    });

    it('describes a deb in CycloneDX: purl, hash, licence from DEP-5, embedded components, dependencies, vulnerabilities', async () => {
      const res = await get('/sbom/sbom-app/1:2.0+dfsg-1?format=cyclonedx');
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-disposition']), /^attachment; filename="sbom-app_1_2.0\+dfsg-1_amd64\.cdx\.json"$/);
      assert.deepEqual(await cyclonedxProblems(res.body), []);
      const bom = res.json();
      const root = bom.metadata.component;
      assert.equal(root.purl, 'pkg:deb/debian/sbom-app@1:2.0%2Bdfsg-1?arch=amd64&distro=bookworm');
      assert.equal(root.hashes[0].alg, 'SHA-256');
      assert.deepEqual(root.licenses, [{ expression: 'GPL-2.0-or-later AND MIT' }]);
      assert.equal(root.supplier.name, 'Jane Doe');
      assert.deepEqual(root.components.map((c: { purl: string }) => c.purl).sort(), [
        'pkg:golang/example.com/sbom-tool@v0.9.0', 'pkg:golang/github.com/spf13/cobra@v1.8.0', 'pkg:maven/org.example/widget@3.1.4',
        'pkg:npm/%40scope/util@0.2.0', 'pkg:npm/left-pad@1.3.0', 'pkg:pypi/requests@2.31.0', 'pkg:pypi/six@1.16.0',
      ]);
      assert.deepEqual(bom.components.map((c: { name: string }) => c.name), ['sbom-base']);
      const edges = bom.dependencies.find((d: { ref: string }) => d.ref === root['bom-ref']);
      assert.deepEqual(edges.dependsOn, [bom.components[0]['bom-ref']]);
      assert.ok(bom.dependencies.some((d: { ref: string; dependsOn: string[] }) => d.ref.endsWith('pkg:golang/example.com/sbom-tool@v0.9.0') && d.dependsOn.length === 1));
      const high = bom.vulnerabilities.find((v: { id: string }) => v.id === 'CVE-2026-1111');
      assert.equal(high.ratings[0].method, 'CVSSv31');
      assert.equal(high.analysis.state, 'exploitable');
      assert.deepEqual(high.analysis.response, ['will_not_fix']);
      assert.ok(high.properties.some((p: { name: string; value: string }) => p.name === 'tollgate:cisa_kev' && p.value === 'true'));
      assert.ok(high.properties.some((p: { name: string }) => p.name === 'tollgate:epss'));
      const inner = bom.vulnerabilities.find((v: { id: string }) => v.id === 'CVE-2026-2222');
      assert.ok(inner.affects[0].ref.endsWith('|pkg:npm/left-pad@1.3.0'), 'the finding names the embedded component');
      assert.equal(inner.analysis, undefined);
    });

    it('describes the same deb in SPDX 2.3 with DESCRIBES, CONTAINS, DEPENDS_ON and SECURITY references', async () => {
      const res = await get('/sbom/sbom-app/1:2.0+dfsg-1?format=SPDX');
      assert.equal(res.statusCode, 200, res.body);
      const doc = res.json();
      assert.deepEqual(spdxProblems(doc), []);
      const app = doc.packages.find((p: { name: string }) => p.name === 'sbom-app');
      assert.equal(app.licenseDeclared, 'GPL-2.0-or-later AND MIT');
      assert.equal(app.checksums[0].algorithm, 'SHA256');
      assert.ok(app.externalRefs.some((r: { referenceType: string; referenceLocator: string }) => r.referenceType === 'advisory' && r.referenceLocator.endsWith('CVE-2026-1111')));
      const types = new Set(doc.relationships.map((r: { relationshipType: string }) => r.relationshipType));
      assert.deepEqual([...types].sort(), ['CONTAINS', 'DEPENDS_ON', 'DESCRIBES']);
      assert.ok(doc.relationships.some((r: { relationshipType: string; spdxElementId: string }) => r.relationshipType === 'DEPENDS_ON' && r.spdxElementId === app.SPDXID));
    });

    it('describes an rpm: epoch qualifier, License tag, vendor, Cargo.lock crates; a free-text licence becomes a LicenseRef', async () => {
      const res = await get('/sbom/sbom-rpm/3:4.2-1.el9?arch=x86_64');
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(await cyclonedxProblems(res.body), []);
      const root = res.json().metadata.component;
      assert.equal(root.purl, 'pkg:rpm/rocky/sbom-rpm@4.2-1.el9?arch=x86_64&distro=rocky-9&epoch=3');
      assert.deepEqual(root.licenses, [{ expression: 'MIT AND Apache-2.0' }]);
      assert.equal(root.supplier.name, 'Example Corp');
      assert.deepEqual(root.components.map((c: { purl: string }) => c.purl), ['pkg:cargo/serde@1.0.190']);
      assert.deepEqual(res.json().components.map((c: { name: string }) => c.name), ['sbom-rpm-lib']);
      const spdx = await get('/sbom/sbom-rpm-lib/1.0-1?format=spdx');
      assert.equal(spdx.statusCode, 200, spdx.body);
      assert.deepEqual(spdxProblems(spdx.json()), []);
      assert.match(spdx.json().packages[0].licenseDeclared, /^LicenseRef-GPLv2-/);
      assert.equal(spdx.json().hasExtractedLicensingInfos[0].extractedText, 'GPLv2+');
    });

    it('exports a whole distribution, streamed, in both formats', async () => {
      for (const format of ['cyclonedx', 'spdx']) {
        const res = await get(`/sbom/export?format=${format}&distribution=bookworm`);
        assert.equal(res.statusCode, 200, res.body);
        assert.match(String(res.headers['content-disposition']), new RegExp(`filename="bookworm-sbom\\.${format === 'spdx' ? 'spdx' : 'cdx'}\\.json"`));
        if (format === 'cyclonedx') {
          assert.deepEqual(await cyclonedxProblems(res.body), []);
          const bom = res.json();
          assert.equal(bom.metadata.component.type, 'operating-system');
          assert.deepEqual(bom.components.map((c: { name: string }) => c.name).sort(), ['sbom-app', 'sbom-base']);
          assert.equal(bom.vulnerabilities.length, 2);
        } else {
          assert.deepEqual(spdxProblems(res.json()), []);
          const names = res.json().packages.filter((p: { primaryPackagePurpose: string }) => p.primaryPackagePurpose === 'INSTALL').map((p: { name: string }) => p.name).sort();
          assert.deepEqual(names, ['sbom-app', 'sbom-base']);
        }
      }
      const rpms = await get('/sbom/export?distribution=rocky9&format=spdx');
      assert.deepEqual(spdxProblems(rpms.json()), []);
      assert.ok(rpms.json().relationships.some((r: { relationshipType: string }) => r.relationshipType === 'DEPENDS_ON'));
    });

    it('previews the first packages to any role', async () => {
      const reader = await t.tokenFor('reader');
      const res = await get('/sbom/preview?distribution=bookworm&limit=1', reader);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(await cyclonedxProblems(res.body), []);
      assert.equal(res.json().components.length, 1);
      const spdx = await get('/sbom/preview?distribution=bookworm&format=spdx', reader);
      assert.deepEqual(spdxProblems(spdx.json()), []);
    });

    it('reports findings as SARIF 2.1.0: a rule per CVE with security-severity, a result per package, accepted risk suppressed', async () => {
      const res = await get('/sbom/sarif?distribution=bookworm');
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-disposition']), /filename="bookworm\.sarif"/);
      const log = res.json();
      assert.deepEqual(sarifProblems(log), []);
      const run = log.runs[0];
      assert.deepEqual(run.tool.driver.rules.map((r: { id: string }) => r.id).sort(), ['CVE-2026-1111', 'CVE-2026-2222']);
      const rule = run.tool.driver.rules.find((r: { id: string }) => r.id === 'CVE-2026-1111');
      assert.equal(rule.properties['security-severity'], '7.5');
      assert.ok(rule.help.text.includes('CISA'));
      assert.equal(run.results.length, 2);
      const accepted = run.results.find((r: { ruleId: string }) => r.ruleId === 'CVE-2026-1111');
      assert.equal(accepted.locations[0].logicalLocations[0].name, 'pkg:deb/debian/sbom-app@1:2.0%2Bdfsg-1?arch=amd64&distro=bookworm');
      assert.equal(accepted.suppressions[0].status, 'accepted');
      const critical = await get('/sbom/sarif?distribution=bookworm&min_severity=Critical');
      assert.deepEqual(critical.json().runs[0].results.map((r: { ruleId: string }) => r.ruleId), ['CVE-2026-2222']);
    });

    it('answers 403 to uploaders and readers on export and per-package SBOMs', async () => {
      for (const role of ['uploader', 'reader'] as const) {
        const token = await t.tokenFor(role);
        for (const url of ['/sbom/export?distribution=bookworm', '/sbom/sbom-base/1.0-1', '/api/v1/sbom/sarif?distribution=bookworm']) {
          const res = await get(url, token);
          assert.equal(res.statusCode, 403, `${role} ${url}: ${res.body}`);
        }
      }
    });

    it('answers 404 for unknown packages and distributions and 422 for a bad format', async () => {
      const missing = await get('/sbom/nothing-here/1.0');
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.json().code, 'package_not_found');
      const dist = await get('/sbom/export?distribution=nowhere');
      assert.equal(dist.statusCode, 404);
      assert.equal(dist.json().code, 'unknown_distribution');
      const format = await get('/sbom/export?distribution=bookworm&format=swid');
      assert.equal(format.statusCode, 422);
      assert.ok(Array.isArray(format.json().errors));
    });
  });
}

describe('SBOM in the Community edition', () => {
  it('answers 402 enterprise_required on every SBOM endpoint', async () => {
    const t = await startTestApp({ env: { EDITION: 'community' } });
    try {
      const token = await t.tokenFor('auditor');
      for (const url of ['/sbom/export?distribution=bookworm', '/sbom/preview?distribution=bookworm', '/sbom/x/1.0', '/sbom/sarif?distribution=bookworm']) {
        const res = await t.app.inject({ method: 'GET', url, headers: bearer(token) });
        assert.equal(res.statusCode, 402, `${url}: ${res.body}`);
        assert.equal(res.json().code, 'enterprise_required');
        assert.equal(res.json().feature, 'sbom');
      }
    } finally {
      await t.close();
    }
  });
});
