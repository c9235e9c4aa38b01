import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { PromptlyCollectedClient } from '../../../src/adapters/db/pg-client.js';

const url = process.env.TEST_DATABASE_URL;

test('PromptlyCollectedClient answers the promise form through the callback form, errors included', { skip: !url && 'TEST_DATABASE_URL is not set' }, async () => {
  const pool = new pg.Pool({ connectionString: url, max: 1, Client: PromptlyCollectedClient });
  try {
    const rows = await pool.query('select $1::int + 1 as n, $2::text as s', [41, 'x']);
    assert.deepEqual(rows.rows, [{ n: 42, s: 'x' }]);
    const plain = await pool.query('select 7 as n');
    assert.deepEqual(plain.rows, [{ n: 7 }]);
    await assert.rejects(pool.query('select * from no_such_table_here', []), /no_such_table_here/);
    // The client is still usable after an error, and the callback form still works as pg's own.
    const client = await pool.connect();
    try {
      const viaCallback = await new Promise<pg.QueryResult>((resolve, reject) => client.query('select 3 as n', [], (err, r) => (err ? reject(err) : resolve(r))));
      assert.deepEqual(viaCallback.rows, [{ n: 3 }]);
      const viaConfig = await client.query({ text: 'select $1::int as n', values: [5] });
      assert.deepEqual(viaConfig.rows, [{ n: 5 }]);
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
});
