/**
 * Experiment, not part of the service: preloaded into the service process
 * (`BENCH_SERVICE_NODE_OPTIONS="--require ./bench/lib/pg-callback-queries.cjs"`), it runs the
 * promise-style `client.query(text, values)` calls Kysely makes through node-postgres's callback
 * form instead, with the callback given when the Query is built.
 *
 * Why: with pg's own promise form (the Query built without a callback, one assigned to it just
 * after), the rows a query returns survive V8's scavenges and are promoted to the old generation,
 * on Node 20 — every byte an export reads from PostgreSQL then stays resident until a full
 * collection (~130 MB per 50,000-package export, which made V8 raise its heap limit to about four
 * times the live heap). Built with the callback, the same rows die young. bench/sbom.ts measures
 * both; the change it stands for belongs where the pool is made (src/adapters/db/index.ts).
 */
'use strict';
const pg = require('pg');

const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, values, callback) {
  if (typeof config === 'string' && (values === undefined || Array.isArray(values)) && callback === undefined) {
    let done;
    const result = new Promise((resolve, reject) => {
      done = (err, res) => (err ? reject(err) : resolve(res));
    });
    query.call(this, config, values, done);
    return result;
  }
  return query.apply(this, arguments);
};
