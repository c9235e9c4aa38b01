import { describe, expect, it } from 'vitest';
import { filesNamedIn, groupUploads } from './upload-plan';

const DSC = `-----BEGIN PGP SIGNED MESSAGE-----
Hash: SHA256

Format: 3.0 (quilt)
Source: hello-src
Version: 2.4.1-1
Checksums-Sha256:
 ${'a'.repeat(64)} 1200 hello-src_2.4.1.orig.tar.gz
 ${'b'.repeat(64)} 300 hello-src_2.4.1-1.debian.tar.xz
Files:
 ${'c'.repeat(32)} 1200 hello-src_2.4.1.orig.tar.gz
 ${'d'.repeat(32)} 300 hello-src_2.4.1-1.debian.tar.xz
Homepage: https://example.org/
-----BEGIN PGP SIGNATURE-----
`;
const CHANGES = `Format: 1.8
Source: hello-src
Files:
 ${'e'.repeat(32)} 900 devel optional hello-src_2.4.1-1.dsc
 ${'c'.repeat(32)} 1200 devel optional hello-src_2.4.1.orig.tar.gz
 ${'d'.repeat(32)} 300 devel optional hello-src_2.4.1-1.debian.tar.xz
`;

const named = (...names: string[]) => names.map((name) => ({ name }));
const shape = (plan: ReturnType<typeof groupUploads<{ name: string }>>) => ({
  uploads: plan.uploads.map((u) => [u.main.name, ...u.files.map((f) => f.name)]),
  unclaimed: plan.unclaimed.map((f) => f.name),
  missing: plan.missing,
});

describe('grouping a set of files into uploads', () => {
  it('reads the file names a .dsc and a .changes list, once each, ignoring what follows the lists', () => {
    expect(filesNamedIn(DSC)).toEqual(['hello-src_2.4.1.orig.tar.gz', 'hello-src_2.4.1-1.debian.tar.xz']);
    expect(filesNamedIn(CHANGES)).toEqual(['hello-src_2.4.1-1.dsc', 'hello-src_2.4.1.orig.tar.gz', 'hello-src_2.4.1-1.debian.tar.xz']);
    expect(filesNamedIn('Package: x\nVersion: 1\n')).toEqual([]);
  });

  it('sends each binary package alone and a .dsc with the files it names', () => {
    const files = named('a_1.0_amd64.deb', 'hello-src_2.4.1-1.dsc', 'hello-src_2.4.1.orig.tar.gz', 'hello-src_2.4.1-1.debian.tar.xz', 'b-1.0-1.x86_64.rpm');
    const plan = groupUploads(files, new Map([['hello-src_2.4.1-1.dsc', filesNamedIn(DSC)]]));
    expect(shape(plan)).toEqual({
      uploads: [['hello-src_2.4.1-1.dsc', 'hello-src_2.4.1.orig.tar.gz', 'hello-src_2.4.1-1.debian.tar.xz'], ['a_1.0_amd64.deb'], ['b-1.0-1.x86_64.rpm']],
      unclaimed: [],
      missing: [],
    });
  });

  it('makes a .changes the upload and its .dsc one of its files, and says what is missing or left over', () => {
    const files = named('notes.txt', 'hello-src_2.4.1-1.dsc', 'hello-src_2.4.1-1.changes', 'hello-src_2.4.1.orig.tar.gz');
    const lists = new Map([['hello-src_2.4.1-1.changes', filesNamedIn(CHANGES)], ['hello-src_2.4.1-1.dsc', filesNamedIn(DSC)]]);
    expect(shape(groupUploads(files, lists))).toEqual({
      uploads: [['hello-src_2.4.1-1.changes', 'hello-src_2.4.1-1.dsc', 'hello-src_2.4.1.orig.tar.gz']],
      unclaimed: ['notes.txt'],
      missing: ['hello-src_2.4.1-1.debian.tar.xz'],
    });
  });
});
