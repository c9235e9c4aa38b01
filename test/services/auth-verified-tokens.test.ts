import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { bearer, startTestApp, type TestApp } from '../helpers/app.js';

// Access tokens are verified once and kept (src/services/auth.ts): what a kept token must still be refused for.
describe('a verified access token kept between requests', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => t.close());

  const me = (token: string) => t.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) });

  it('is refused once expired, and a token differing in one character is refused though the real one is kept', async () => {
    const token = await t.tokenFor('reader');
    assert.equal((await me(token)).statusCode, 200);
    assert.equal((await me(token)).statusCode, 200);
    // One character of the signature changed: the first, all of whose bits are the signature's (the
    // last character's low bits are base64 padding, and a change there decodes to the same bytes).
    const at = token.lastIndexOf('.') + 1;
    const altered = `${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}`;
    assert.equal((await me(altered)).statusCode, 401);
    assert.equal((await me(`${token}x`)).statusCode, 401);

    const lifetime = t.config.jwtExpireMinutes * 60_000;
    mock.timers.enable({ apis: ['Date'], now: Date.now() + lifetime + 1_000 });
    try {
      assert.deepEqual(await t.ctx.auth.authenticate(token), { error: 'invalid' });
    } finally {
      mock.timers.reset();
    }
  });

  it('is refused after a password change (the account is read each time)', async () => {
    const token = await t.tokenFor('maintainer', 'kept-token-user');
    assert.equal((await me(token)).statusCode, 200);
    const user = (await t.ctx.users.byUsername('kept-token-user'))!;
    await t.ctx.db.updateTable('users').set({ token_version: user.token_version + 1 }).where('id', '=', user.id).execute();
    assert.equal((await me(token)).statusCode, 401);
  });
});
