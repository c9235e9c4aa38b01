import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { freePort } from '../../harness/net.js';
import { spawnService, waitFor } from '../../harness/service.js';
import { makeTempDir } from '../helpers/tmp.js';

describe('start-up of the real service on an empty data folder', () => {
  it('answers ready only once it can sign: the first 200 from /health/ready comes with a signing key', async (t) => {
    const data = await makeTempDir('tollgate-startup-');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const started = Date.now();
    // The default RSA-4096 key: the slow case, generated after the listener opens.
    const child = spawnService(data.dir, port, { SIGNING_KEY_ALGORITHM: 'rsa4096' });
    t.after(async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      await data.cleanup();
    });
    const seen = new Set<number>();
    await waitFor(async () => {
      const res = await fetch(`${base}/health/ready`);
      seen.add(res.status);
      if (res.status === 503) {
        const body = (await res.json()) as { detail: string; code: string; failing: string[] };
        assert.equal(body.code, 'not_ready');
        assert.ok(body.failing.every((f) => ['startup', 'gpg'].includes(f)), body.failing.join());
      }
      return res.ok;
    }, 'ready', 60_000);
    const readyAfter = Date.now() - started;
    const health = (await (await fetch(`${base}/health`)).json()) as { components: { gpg: { ok: boolean; key_count: number } } };
    assert.equal(health.components.gpg.ok, true, 'ready means an upload made now is signed');
    assert.equal(health.components.gpg.key_count, 1);
    t.diagnostic(`ready ${readyAfter} ms after spawn (statuses seen: ${[...seen].join(', ')})`);
  });
});
