import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PackageFormatError } from '../../../../src/domain/errors.js';
import { debPoolPath, poolPrefix, sourceName, versionWithoutEpoch } from '../../../../src/domain/repo/apt/pool-path.js';

describe('debPoolPath', () => {
  it('follows the Debian pool layout', () => {
    assert.equal(debPoolPath({ name: 'hello', version: '2.10-1', architecture: 'amd64' }), 'pool/main/h/hello/hello_2.10-1_amd64.deb');
    assert.equal(debPoolPath({ name: 'libssl3', version: '3.0.2-0ubuntu1.10', architecture: 'amd64', source: 'openssl' }), 'pool/main/o/openssl/libssl3_3.0.2-0ubuntu1.10_amd64.deb');
    assert.equal(debPoolPath({ name: 'libssl3', version: '1:3.0.2', architecture: 'amd64', source: 'libssl (3.0.2)' }), 'pool/main/libs/libssl/libssl3_3.0.2_amd64.deb');
    assert.equal(debPoolPath({ name: 'tzdata', version: '2024a-1', architecture: 'all', source: '' }), 'pool/main/t/tzdata/tzdata_2024a-1_all.deb');
    assert.equal(poolPrefix('lib'), 'l');
    assert.equal(poolPrefix('libx'), 'libx');
    assert.equal(sourceName('a1', null), 'a1');
    assert.equal(versionWithoutEpoch('12:1.0:2-1'), '1.0:2-1');
  });

  it('refuses anything that could leave the pool folder', () => {
    const bad = [
      { name: '../etc', version: '1.0', architecture: 'amd64' },
      { name: 'ok', version: '1.0/../../x', architecture: 'amd64' },
      { name: 'ok', version: '1.0', architecture: '../amd64' },
      { name: 'ok', version: '1.0', architecture: 'amd64', source: '../../etc' },
      { name: 'ok', version: '1.0', architecture: 'amd64', component: '../x' },
      { name: 'Upper', version: '1.0', architecture: 'amd64' },
    ];
    for (const input of bad) assert.throws(() => debPoolPath(input), PackageFormatError, JSON.stringify(input));
  });
});
