import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseScanReply, parseVersionReply } from '../../../src/adapters/clamav/protocol.js';
import { DomainError } from '../../../src/domain/errors.js';

describe('parseVersionReply', () => {
  it('reads engine, signature version and date from an official-database reply', () => {
    const v = parseVersionReply('ClamAV 1.4.6/27000/Mon Nov 17 09:35:00 2025');
    assert.equal(v.engine, '1.4.6');
    assert.equal(v.signatures, '27000');
    assert.match(v.signatureDate ?? '', /^2025-11-1[67]T\d\d:35:00\.000Z$/);
    assert.equal(v.raw, 'ClamAV 1.4.6/27000/Mon Nov 17 09:35:00 2025');
  });

  it('accepts a bare engine version (custom database)', () => {
    assert.deepEqual(parseVersionReply('ClamAV 1.4.6\n'), {
      engine: '1.4.6',
      signatures: null,
      signatureDate: null,
      raw: 'ClamAV 1.4.6',
    });
  });

  it('keeps an unparseable date as text', () => {
    assert.equal(parseVersionReply('ClamAV 1.0.0/1/someday').signatureDate, 'someday');
  });

  it('refuses a reply that is not a ClamAV version', () => {
    assert.throws(() => parseVersionReply('UNKNOWN COMMAND'), (e: unknown) => e instanceof DomainError && e.code === 'antivirus_error');
  });
});

describe('parseScanReply', () => {
  it('reads clean and infected replies', () => {
    assert.deepEqual(parseScanReply('stream: OK'), { clean: true });
    assert.deepEqual(parseScanReply('stream: Win.Test.EICAR_HDB-1 FOUND'), { clean: false, signature: 'Win.Test.EICAR_HDB-1' });
  });

  it('maps the size limit to too_large and other errors to antivirus_error', () => {
    assert.throws(
      () => parseScanReply('INSTREAM size limit exceeded. ERROR', 'data.tar.xz'),
      (e: unknown) => e instanceof DomainError && e.kind === 'too_large' && e.code === 'antivirus_size_limit' && /data\.tar\.xz/.test(e.message),
    );
    assert.throws(() => parseScanReply('stream: Can\'t allocate memory ERROR'), (e: unknown) => e instanceof DomainError && e.code === 'antivirus_error');
    assert.throws(() => parseScanReply('garbage'), (e: unknown) => e instanceof DomainError && e.code === 'antivirus_error');
  });
});
