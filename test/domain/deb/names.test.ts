import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  assertValidArchitectureName,
  assertValidPackageName,
  assertValidPackageVersion,
  isAptDistributionArchitecture,
  isValidArchitectureName,
  isValidPackageName,
  isValidPackageVersion,
} from '../../../src/domain/deb/names.js';
import { PackageFormatError } from '../../../src/domain/errors.js';
import { makeTempDir } from '../../helpers/tmp.js';

const exec = promisify(execFile);

const VALID_NAMES = ['ab', 'hello', 'libc6', 'g++', 'libstdc++6', 'python3.12', 'lib32z1-dev', '0ad', 'a..b', 'x-'];
const INVALID_NAMES = ['', 'a', 'A-b', 'Hello', 'a_b', '+ab', '-ab', '.ab', '../x', 'a/b', '/etc', 'a b', 'a\nb', 'ä-b', 'x'.repeat(129)];

describe('package names', () => {
  it('accepts Debian policy names', () => {
    for (const name of VALID_NAMES) assert.equal(isValidPackageName(name), true, name);
  });

  it('rejects everything else, including path-like names', () => {
    for (const name of INVALID_NAMES) {
      assert.equal(isValidPackageName(name), false, JSON.stringify(name));
      assert.throws(() => assertValidPackageName(name), (e: unknown) => e instanceof PackageFormatError && e.code === 'invalid_package_name');
    }
  });

  it('is never looser than dpkg-deb (every name dpkg-deb refuses is refused)', async () => {
    const { dir, cleanup } = await makeTempDir();
    try {
      for (const name of ['a_b', '+ab', '-ab', 'a/b', 'a b', ...VALID_NAMES.slice(0, 4)]) {
        const root = join(dir, `r${Math.random().toString(36).slice(2)}`);
        await mkdir(join(root, 'DEBIAN'), { recursive: true });
        await writeFile(join(root, 'DEBIAN', 'control'), `Package: ${name}\nVersion: 1.0\nArchitecture: all\nMaintainer: T <t@e.invalid>\nDescription: d\n`);
        const dpkgAccepts = await exec('dpkg-deb', ['--build', root, join(dir, 'out.deb')]).then(
          () => true,
          () => false,
        );
        if (!dpkgAccepts) assert.equal(isValidPackageName(name), false, name);
        else assert.equal(isValidPackageName(name), VALID_NAMES.includes(name), name);
      }
    } finally {
      await cleanup();
    }
  });
});

describe('versions and architectures', () => {
  it('validates versions through the dpkg rules with a length cap', () => {
    assert.equal(isValidPackageVersion('1:2.3-4ubuntu0.1'), true);
    assert.equal(isValidPackageVersion('1.0~rc1+dfsg'), true);
    for (const bad of ['', 'a1', '1.0 1', '../1', '1/2', '1:', `1.${'0'.repeat(200)}`]) {
      assert.equal(isValidPackageVersion(bad), false, bad);
      assert.throws(() => assertValidPackageVersion(bad), (e: unknown) => e instanceof PackageFormatError && e.code === 'invalid_version');
    }
  });

  it('checks architecture syntax and the APT distribution set separately', () => {
    for (const arch of ['amd64', 'all', 'arm64', 'i386', 'linux-any']) assert.equal(isValidArchitectureName(arch), true, arch);
    for (const arch of ['', 'AMD64', 'x86_64', '../amd64', 'amd 64']) {
      assert.equal(isValidArchitectureName(arch), false, arch);
      assert.throws(() => assertValidArchitectureName(arch), (e: unknown) => e instanceof PackageFormatError && e.code === 'invalid_architecture');
    }
    assert.equal(isAptDistributionArchitecture('amd64'), true);
    assert.equal(isAptDistributionArchitecture('all'), true);
    assert.equal(isAptDistributionArchitecture('arm64'), false);
    assert.equal(isAptDistributionArchitecture('i386'), false);
  });
});
