import pg from 'pg';

type QueryCallback = (err: Error | null, result: pg.QueryResult) => void;

/**
 * A node-postgres client whose `query(text, values)` calls, the form Kysely makes, run through
 * pg's callback form with the callback given when the query is built.
 *
 * Why: in pg's own promise form the Query is built without a callback and handed one just
 * after; on Node 20 the rows such a query returns then survive V8's scavenges and are promoted
 * to the old generation, so every row a large read (an SBOM export of 50,000 packages) takes
 * from PostgreSQL stays resident until a full collection and V8 grows the heap to several times
 * what is live. Built with the callback, the same rows die young. bench/sbom.ts measures it.
 */
export class PromptlyCollectedClient extends pg.Client {
  // The overloads of pg.Client#query cannot be restated one by one in a subclass; this narrows
  // only the (text, values) promise call and hands every other form to pg unchanged.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === 'string' && (values === undefined || Array.isArray(values)) && callback === undefined) {
      return new Promise<pg.QueryResult>((resolve, reject) => {
        const done: QueryCallback = (err, result) => (err ? reject(err) : resolve(result));
        super.query(config, values as unknown[], done);
      });
    }
    // eslint-disable-next-line prefer-rest-params
    return (super.query as (...args: unknown[]) => unknown)(...Array.from(arguments));
  }
}
