import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { primaryDependencies, splitDependencyEvr } from '../../../../src/domain/repo/rpm/deps.js';
import { otherChangelog } from '../../../../src/domain/repo/rpm/other.js';
import { primaryPackageXml } from '../../../../src/domain/repo/rpm/primary.js';
import { escapeAttr, escapeText, stripInvalidXmlChars } from '../../../../src/domain/repo/rpm/xml.js';
import type { RpmPackage } from '../../../../src/domain/rpm/package.js';
import { Sense } from '../../../../src/domain/rpm/tags.js';
import { child, parseXml } from './mini-xml.js';

function fakePackage(overrides: Partial<RpmPackage> = {}): RpmPackage {
  return {
    name: 'fake', epoch: null, version: '1', release: '1', arch: 'x86_64', isSource: false,
    summary: '', description: '', license: '', url: '', vendor: '', packager: '', group: '',
    buildTime: 0, buildHost: '', sourceRpm: 'fake-1-1.src.rpm', packageSize: 10, installedSize: 0, archiveSize: 0,
    requires: [], provides: [], conflicts: [], obsoletes: [], recommends: [], suggests: [], supplements: [], enhances: [],
    files: [], changelog: [], headerStart: 0, headerEnd: 0, payloadOffset: 0, payloadCompressor: 'gzip', payloadFormat: 'cpio',
    headerSha256: '',
    ...overrides,
  };
}

describe('repodata XML text', () => {
  it('drops characters XML 1.0 cannot carry and escapes the rest', () => {
    assert.equal(stripInvalidXmlChars('a\u0000b\u0007c\u000bd\u001fe\uFFFEf\uD800g\t\n\r😀'), 'abcdefg\t\n\r😀');
    assert.equal(escapeText('<a> & "b"\r'), '&lt;a&gt; &amp; "b"&#13;');
    assert.equal(escapeAttr('<a> & "b"\n\t'), '&lt;a&gt; &amp; &quot;b&quot;&#10;&#9;');
  });

  it('keeps a hostile package parseable', () => {
    const xml = primaryPackageXml({
      pkg: fakePackage({
        summary: 'bell\u0007 <script> & ]]> "x"',
        description: 'nul\u0000 here',
        files: [{ path: '/usr/bin/a\u0001b', mode: 0o100755, flags: 0, type: 'file', size: 1, linkTo: '', digest: '' }],
        provides: [{ name: 'fake\u001b"', flags: Sense.EQUAL, evr: '1-1', pre: false }],
      }),
      checksum: 'abc',
      locationHref: 'Packages/f/fake "1".rpm',
      fileTime: 5,
    });
    const doc = parseXml(xml);
    assert.equal(child(doc, 'summary').text, 'bell <script> & ]]> "x"');
    assert.equal(child(doc, 'description').text, 'nul here');
    assert.equal(child(doc, 'location').attrs.href, 'Packages/f/fake "1".rpm');
    assert.equal(child(child(doc, 'format'), 'file').text, '/usr/bin/ab');
  });
});

describe('primary.xml dependency rules beyond what rpmbuild produces', () => {
  it('splits EVRs like createrepo_c and drops non-numeric epochs', () => {
    assert.deepEqual(splitDependencyEvr('1:2.0-3-4'), { epoch: '1', ver: '2.0', rel: '3-4' });
    assert.deepEqual(splitDependencyEvr('2.0'), { epoch: '0', ver: '2.0' });
    assert.deepEqual(splitDependencyEvr(''), {});
    assert.equal(splitDependencyEvr('x:1.0'), null);
  });

  it('turns legacy MISSINGOK requires into recommends and skips bad epochs', () => {
    const deps = primaryDependencies(
      fakePackage({
        requires: [
          { name: 'weak', flags: Sense.MISSINGOK, evr: '', pre: false },
          { name: 'bad-epoch', flags: Sense.EQUAL, evr: 'x:1', pre: false },
          { name: 'strong', flags: Sense.GREATER | Sense.EQUAL, evr: '2', pre: false },
        ],
        recommends: [{ name: 'modern', flags: 0, evr: '', pre: false }],
      }),
    );
    assert.deepEqual(deps.requires.map((d) => d.name), ['strong']);
    assert.deepEqual(deps.recommends.map((d) => d.name), ['weak', 'modern']);
  });

  it('limits and orders changelogs like createrepo_c', () => {
    const entries = [30, 20, 20, 20, 10].map((time, i) => ({ time, author: `a${i}  `, text: `t${i}` }));
    assert.deepEqual(
      otherChangelog(entries, 4).map((e) => [e.time, e.author, e.text]),
      [
        [20, 'a3', 't3'],
        [21, 'a2', 't2'],
        [22, 'a1', 't1'],
        [30, 'a0', 't0'],
      ],
    );
  });
});
