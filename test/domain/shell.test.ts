import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { shellQuote } from '../../src/domain/shell.js';

/** What `sh` makes of a quoted word: printed back byte for byte. */
function throughSh(quoted: string): string {
  const result = spawnSync('sh', ['-c', `printf %s ${quoted}`], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout;
}

const HOSTILE = [
  "it's",
  "'",
  "''",
  "a'b'c",
  'x; rm -rf /tmp/nothing',
  '$(id)',
  '`id`',
  '${HOME}',
  'a b\tc\nd',
  '*',
  '[abc]',
  '~root',
  'a|b&c>d<e',
  '"double"',
  'back\\slash',
  "http://host/'; touch /tmp/pwned; echo '",
  '-n',
  '#comment',
  'ünïcødé',
];

describe('shellQuote', () => {
  it('leaves plain words bare', () => {
    for (const word of ['hello', 'pkg=1.0-1', 'https://repo.example.org:8443/repo/apt', '/usr/share/keyrings/tollgate.gpg', 'a+b,c@d%e']) {
      assert.equal(shellQuote(word), word);
    }
  });

  it('quotes the empty string so it stays one word', () => {
    assert.equal(shellQuote(''), "''");
    assert.equal(throughSh(shellQuote('')), '');
  });

  it('wraps anything else in single quotes, a quote written as \'\\\'\'', () => {
    assert.equal(shellQuote("it's"), "'it'\\''s'");
    assert.equal(shellQuote('a b'), "'a b'");
  });

  it('round-trips every hostile value through sh unchanged', () => {
    for (const value of HOSTILE) assert.equal(throughSh(shellQuote(value)), value, JSON.stringify(value));
  });

  it('keeps the value one word', () => {
    for (const value of HOSTILE) {
      const result = spawnSync('sh', ['-c', `set -- ${shellQuote(value)} end; printf %s "$#"`], { encoding: 'utf8' });
      assert.equal(result.stdout, '2', JSON.stringify(value));
    }
  });
});
