import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  ControlStanza,
  descriptionSynopsis,
  multilineValue,
  parseControl,
  parseControlStanza,
  serializeControl,
  serializeControlStanza,
} from '../../../src/domain/deb/control.js';
import { PackageFormatError } from '../../../src/domain/errors.js';
import { makeTempDir } from '../../helpers/tmp.js';

const exec = promisify(execFile);

const SAMPLE = `Package: hello
Version: 2.10-3
Architecture: amd64
Maintainer: Santiago Vila <sanvila@debian.org>
Installed-Size: 280
Depends: libc6 (>= 2.34)
Section: devel
Priority: optional
Homepage: https://www.gnu.org/software/hello/
Description: example package based on GNU hello
 The GNU hello program produces a familiar, friendly greeting.  It
 allows non-programmers to use a classic computer science tool which
 would otherwise be unavailable to them.
 .
 Seriously, though: this is an example of how to do a Debian package.
`;

function code(expected: string): (error: unknown) => boolean {
  return (error: unknown) => error instanceof PackageFormatError && error.code === expected;
}

describe('parseControl', () => {
  it('reads fields in order, with multiline values kept verbatim', () => {
    const stanza = parseControlStanza(SAMPLE);
    assert.deepEqual(
      stanza.fields.map((f) => f.name),
      ['Package', 'Version', 'Architecture', 'Maintainer', 'Installed-Size', 'Depends', 'Section', 'Priority', 'Homepage', 'Description'],
    );
    assert.equal(stanza.get('Version'), '2.10-3');
    const description = stanza.get('Description') ?? '';
    assert.equal(descriptionSynopsis(description), 'example package based on GNU hello');
    assert.equal(description.split('\n').length, 6);
    assert.equal(description.split('\n')[4], ' .');
  });

  it('reads CRLF and runs of trailing CRs alike, so a value written back reads the same (found by fuzz/targets/deb-control)', () => {
    const [stanza] = parseControl('Package: a\r\r\r\nDescription: x\r\n more\r\r\n');
    assert.deepEqual(stanza!.toJSON(), [{ name: 'Package', value: 'a' }, { name: 'Description', value: 'x\n more' }]);
    const again = parseControl(serializeControl(parseControl(`q:\n o${'\r'.repeat(60)}\n p`)));
    assert.deepEqual(again.map((s) => s.toJSON()), parseControl(`q:\n o\n p`).map((s) => s.toJSON()));
  });

  it('looks names up case-insensitively but keeps the original case', () => {
    const stanza = parseControlStanza('package: x\nVERSION: 1\nMulti-Arch: foreign\n');
    assert.equal(stanza.get('Package'), 'x');
    assert.equal(stanza.get('version'), '1');
    assert.equal(stanza.get('multi-arch'), 'foreign');
    assert.deepEqual(stanza.fields.map((f) => f.name), ['package', 'VERSION', 'Multi-Arch']);
    assert.equal(stanza.has('PACKAGE'), true);
    assert.equal(stanza.get('Depends'), undefined);
    assert.equal(JSON.stringify(stanza), JSON.stringify(stanza.fields));
    const proto = parseControlStanza('__proto__: x\nconstructor: y\n').toRecord();
    assert.deepEqual(Object.keys(proto), ['__proto__', 'constructor']);
    assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  });

  it('splits paragraphs on blank or whitespace-only lines, tolerates CRLF and extra blank lines', () => {
    const text = '\n\nPackage: a\nVersion: 1\n \t\nPackage: b\r\nVersion: 2\r\n\r\n\n\nPackage: c\nVersion: 3';
    const stanzas = parseControl(text);
    assert.deepEqual(stanzas.map((s) => s.get('Package')), ['a', 'b', 'c']);
    assert.equal(stanzas[1]?.get('Version'), '2');
  });

  it('keeps an empty first line (Release-style multiline fields)', () => {
    const stanza = parseControlStanza('SHA256:\n abc 12 main/binary-amd64/Packages\n def 34 main/binary-amd64/Packages.gz\n');
    assert.equal(stanza.get('SHA256'), '\n abc 12 main/binary-amd64/Packages\n def 34 main/binary-amd64/Packages.gz');
  });

  it('rejects malformed input with a code', () => {
    assert.throws(() => parseControl(' leading continuation\n'), code('bad_control_syntax'));
    assert.throws(() => parseControl('no colon here\n'), code('bad_control_syntax'));
    assert.throws(() => parseControl(': empty name\n'), code('bad_control_syntax'));
    assert.throws(() => parseControl('Bad Name: x\n'), code('bad_control_syntax'));
    assert.throws(() => parseControl('Package: a\npackage: b\n'), code('bad_control_field'));
    assert.throws(() => parseControl('# comment\nPackage: a\n'), code('bad_control_syntax'));
    assert.equal(parseControl('# comment\nPackage: a\n', { allowComments: true })[0]?.get('Package'), 'a');
    assert.throws(() => parseControlStanza('Package: a\n\nPackage: b\n'), code('bad_control_syntax'));
    assert.throws(() => parseControlStanza('\n\n'), code('bad_control_syntax'));
    assert.throws(() => parseControl('A: 1\n\nB: 2\n\nC: 3\n', { maxParagraphs: 2 }), code('bad_control_syntax'));
    const many = Array.from({ length: 20 }, (_, i) => `F${i}: v`).join('\n');
    assert.throws(() => parseControl(many, { maxFieldsPerParagraph: 10 }), code('bad_control_syntax'));
  });

  it('parses 10,000 paragraphs quickly (a Packages index)', () => {
    const text = Array.from({ length: 10_000 }, (_, i) => `Package: p${i}\nVersion: 1.${i}\nDescription: d\n long ${i}\n`).join('\n');
    const started = Date.now();
    const stanzas = parseControl(text);
    assert.equal(stanzas.length, 10_000);
    assert.equal(stanzas[9_999]?.get('Version'), '1.9999');
    assert.ok(Date.now() - started < 2000);
  });
});

describe('serializeControlStanza', () => {
  it('round-trips byte for byte', () => {
    assert.equal(serializeControlStanza(parseControlStanza(SAMPLE)), SAMPLE);
    const release = 'Origin: x\nMD5Sum:\n abc 1 a\n def 2 b\n';
    assert.equal(serializeControlStanza(parseControlStanza(release)), release);
  });

  it('joins paragraphs with one blank line and preserves field order from set/delete', () => {
    const first = new ControlStanza([{ name: 'Package', value: 'a' }, { name: 'Version', value: '1' }]);
    first.set('version', '2');
    first.set('Filename', 'pool/a.deb');
    first.delete('PACKAGE');
    first.set('Package', 'a');
    const second = new ControlStanza([{ name: 'Package', value: 'b' }]);
    assert.equal(serializeControl([first, second]), 'Version: 2\nFilename: pool/a.deb\nPackage: a\n\nPackage: b\n');
  });

  it('refuses values that would break the structure', () => {
    assert.throws(() => serializeControlStanza([{ name: 'Description', value: 'x\nnot indented' }]), code('bad_control_field'));
    assert.throws(() => serializeControlStanza([{ name: 'Description', value: 'x\n \n more' }]), code('bad_control_field'));
    assert.throws(() => serializeControlStanza([{ name: 'Bad:Name', value: 'x' }]), code('bad_control_field'));
    assert.equal(multilineValue('synopsis', ['line one', '', 'line two']), 'synopsis\n line one\n .\n line two');
  });

  it('produces text that dpkg-deb accepts and reads back identically', async () => {
    const { dir, cleanup } = await makeTempDir();
    try {
      const stanza = parseControlStanza(SAMPLE);
      stanza.set('Description', multilineValue('made by the serializer', ['first line', '', 'after a gap']));
      await exec('mkdir', ['-p', join(dir, 'root', 'DEBIAN')]);
      await writeFile(join(dir, 'root', 'DEBIAN', 'control'), serializeControlStanza(stanza));
      await exec('dpkg-deb', ['--root-owner-group', '--build', join(dir, 'root'), join(dir, 'x.deb')]);
      const { stdout } = await exec('dpkg-deb', ['-f', join(dir, 'x.deb')]);
      const back = parseControlStanza(stdout);
      assert.equal(back.get('Description'), stanza.get('Description'));
      assert.equal(back.get('Depends'), 'libc6 (>= 2.34)');
    } finally {
      await cleanup();
    }
  });
});
