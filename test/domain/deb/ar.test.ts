import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ArFile, openArMember, readArMemberBytes, readArMembers } from '../../../src/domain/deb/ar.js';
import { PackageFormatError } from '../../../src/domain/errors.js';
import { buildDeb, writeArArchive } from '../../../harness/debs.js';
import { makeTempDir } from '../../helpers/tmp.js';

const exec = promisify(execFile);

let dir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir, cleanup } = await makeTempDir()));
after(() => cleanup());

function code(expected: string): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof PackageFormatError, String(error));
    assert.equal(error.code, expected, error.message);
    return true;
  };
}

async function arList(path: string): Promise<string[]> {
  const { stdout } = await exec('ar', ['t', path]);
  return stdout.trim().split('\n');
}

async function arPrint(path: string, member: string): Promise<Buffer> {
  const { stdout } = await exec('ar', ['p', path, member], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

describe('readArMembers on real archives', () => {
  it('lists what binutils ar lists in a dpkg-deb package, and streams identical member bytes', async () => {
    const deb = await buildDeb(dir, { name: 'ar-probe', version: '1.0', files: { 'usr/share/x': randomBytes(5001) } });
    const members = await readArMembers(deb);
    assert.deepEqual(members.map((m) => m.name), await arList(deb));
    assert.deepEqual(members.map((m) => m.name), ['debian-binary', 'control.tar.xz', 'data.tar.xz']);
    for (const member of members) {
      assert.ok((await buffer(openArMember(deb, member))).equals(await arPrint(deb, member.name)), member.name);
    }
    assert.equal((await readArMemberBytes(deb, members[0]!, 64)).toString(), '2.0\n');
    await assert.rejects(readArMemberBytes(deb, members[2]!, 10), code('member_too_large'));
  });

  it('ArFile gives the same bytes whether a member lies in its prefix, across its end or past it', async () => {
    const deb = await buildDeb(dir, { name: 'ar-prefix', version: '1.0', files: { 'usr/share/x': randomBytes(20_000) } });
    const whole = await readFile(deb);
    const expected = await readArMembers(deb);
    // A prefix of nothing, of part of the archive (a boundary inside a header and inside members), and of all of it.
    for (const prefixBytes of [0, 70, 200, 1000, whole.length - 3, whole.length + 10]) {
      const file = await ArFile.open(deb, prefixBytes);
      try {
        assert.deepEqual(await file.members(), expected, `prefix ${prefixBytes}`);
        for (const member of expected) {
          const bytes = whole.subarray(member.offset, member.offset + member.size);
          assert.ok((await buffer(file.stream(member))).equals(bytes), `${member.name}, prefix ${prefixBytes}`);
          assert.ok((await file.memberHead(member, 512)).equals(bytes.subarray(0, 512)), `${member.name} head, prefix ${prefixBytes}`);
        }
        assert.ok((await file.read(60, 40)).equals(whole.subarray(60, 100)));
        await assert.rejects(file.read(whole.length - 5, 10), code('truncated_archive'));
        await assert.rejects(file.memberBytes(expected[2]!, 10), code('member_too_large'));
      } finally {
        await file.close();
      }
    }
  });

  it('reads GNU long names (the // table) written by binutils ar, odd sizes and padding', async () => {
    await writeFile(join(dir, 'a-rather-long-member-name.bin'), randomBytes(333));
    await writeFile(join(dir, 'short'), randomBytes(7));
    await writeFile(join(dir, 'another-quite-long-name.txt'), 'hello');
    const archive = join(dir, 'gnu.a');
    await exec('ar', ['rcS', archive, 'a-rather-long-member-name.bin', 'short', 'another-quite-long-name.txt'], { cwd: dir });
    const members = await readArMembers(archive);
    assert.deepEqual(members.map((m) => m.name), await arList(archive));
    for (const member of members) {
      assert.ok((await buffer(openArMember(archive, member))).equals(await readFile(join(dir, member.name))), member.name);
    }
  });

  it('reads BSD long names (#1/len, name stored before the data)', async () => {
    const name = 'control.tar.zst.with.a.long.name';
    const payload = randomBytes(101);
    const archive = await writeArArchive(join(dir, 'bsd.a'), [
      { name: 'debian-binary', data: Buffer.from('2.0\n') },
      { name: `#1/${name.length}`, data: Buffer.concat([Buffer.from(name), payload]) },
    ]);
    const members = await readArMembers(archive);
    assert.deepEqual(members.map((m) => [m.name, m.size]), [['debian-binary', 4], [name, 101]]);
    assert.ok((await buffer(openArMember(archive, members[1]!))).equals(payload));
  });

  it('reads only headers: a 2 GiB (sparse) member costs no memory', async () => {
    const archive = join(dir, 'huge.a');
    const size = 2 * 1024 * 1024 * 1024;
    await writeArArchive(archive, [{ name: 'debian-binary', data: Buffer.from('2.0\n') }, { name: 'data.tar', data: Buffer.alloc(0), declaredSize: String(size) }]);
    const before = (await readFile(archive)).length;
    await truncate(archive, before + size);
    const rss = process.memoryUsage().rss;
    const members = await readArMembers(archive);
    assert.equal(members[1]?.size, size);
    assert.ok(process.memoryUsage().rss - rss < 100 * 1024 * 1024);
  });
});

describe('readArMembers on malformed archives', () => {
  it('wrong magic or a too-short file → not_ar_archive', async () => {
    await writeFile(join(dir, 'empty'), '');
    await assert.rejects(readArMembers(join(dir, 'empty')), code('not_ar_archive'));
    await writeFile(join(dir, 'text'), 'Package: not an archive\n');
    await assert.rejects(readArMembers(join(dir, 'text')), code('not_ar_archive'));
    const archive = await writeArArchive(join(dir, 'magic.a'), [{ name: 'x', data: Buffer.from('1') }], '!<arch>\r');
    await assert.rejects(readArMembers(archive), code('not_ar_archive'));
  });

  it('an archive cut inside a header or inside data → truncated_archive', async () => {
    const deb = await buildDeb(dir, { name: 'cut', version: '1.0' });
    const bytes = await readFile(deb);
    await writeFile(join(dir, 'cut1'), bytes.subarray(0, 8 + 30));
    await assert.rejects(readArMembers(join(dir, 'cut1')), code('truncated_archive'));
    await writeFile(join(dir, 'cut2'), bytes.subarray(0, bytes.length - 10));
    await assert.rejects(readArMembers(join(dir, 'cut2')), code('truncated_archive'));
  });

  it('sizes that exceed the file, or are not numbers → truncated_archive / bad_member_header', async () => {
    const absurd = await writeArArchive(join(dir, 'absurd.a'), [{ name: 'debian-binary', data: Buffer.from('2.0\n'), declaredSize: '9999999999' }]);
    await assert.rejects(readArMembers(absurd), code('truncated_archive'));
    const negative = await writeArArchive(join(dir, 'neg.a'), [{ name: 'debian-binary', data: Buffer.from('2.0\n'), declaredSize: '-4' }]);
    await assert.rejects(readArMembers(negative), code('bad_member_header'));
    const text = await writeArArchive(join(dir, 'text.a'), [{ name: 'debian-binary', data: Buffer.from('2.0\n'), declaredSize: '0x10' }]);
    await assert.rejects(readArMembers(text), code('bad_member_header'));
    const noTerminator = join(dir, 'term.a');
    await writeArArchive(noTerminator, [{ name: 'x', data: Buffer.from('ab') }]);
    const raw = await readFile(noTerminator);
    raw[8 + 58] = 0x41;
    await writeFile(noTerminator, raw);
    await assert.rejects(readArMembers(noTerminator), code('bad_member_header'));
  });

  it('too many members, bad names, broken long-name references', async () => {
    const many = Array.from({ length: 20 }, (_, i) => ({ name: `m${i}`, data: Buffer.from('x') }));
    await assert.rejects(readArMembers(await writeArArchive(join(dir, 'many.a'), many), { maxMembers: 10 }), code('too_many_members'));
    const bsdTooLong = await writeArArchive(join(dir, 'bsd-long.a'), [{ name: '#1/500', data: Buffer.alloc(600, 0x61) }]);
    await assert.rejects(readArMembers(bsdTooLong), code('bad_member_name'));
    const dangling = await writeArArchive(join(dir, 'dangling.a'), [{ name: '/0', data: Buffer.from('x') }]);
    await assert.rejects(readArMembers(dangling), code('bad_member_name'));
    const slashy = await writeArArchive(join(dir, 'slash.a'), [{ name: '#1/6', data: Buffer.from('../../x') }]);
    await assert.rejects(readArMembers(slashy), code('bad_member_name'));
  });

  it('tolerates a missing final padding byte', async () => {
    const archive = await writeArArchive(join(dir, 'pad.a'), [{ name: 'debian-binary', data: Buffer.from('2.0\n') }, { name: 'odd', data: Buffer.from('abc') }]);
    const raw = await readFile(archive);
    await writeFile(archive, raw.subarray(0, raw.length - 1));
    assert.deepEqual((await readArMembers(archive)).map((m) => m.name), ['debian-binary', 'odd']);
  });
});
