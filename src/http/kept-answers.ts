/**
 * Answers sent as bytes kept from an earlier request.
 *
 * Some services keep whole answers (a listing page is kept per catalog generation, see
 * services/packages/catalog.ts): while they return the same object, serializing it again with the
 * route's response schema gives the same JSON, so it is serialized once and those bytes are sent.
 * Bodies are held only as long as the service keeps the object (a WeakMap keyed on it). One
 * instance per route: the bytes are the output of that route's serializer.
 */
import type { FastifyReply } from 'fastify';

export function keptAnswers() {
  const bodies = new WeakMap<object, Buffer>();
  /** Sends the answer made from `kept` (a value the service keeps, unchanged) as JSON with the route's 200 schema. */
  return (reply: FastifyReply, kept: object, answer: () => unknown): FastifyReply => {
    let body = bodies.get(kept);
    if (!body) {
      // The route's serializer answers a string (JSON); String() also reads a Buffer as UTF-8.
      body = Buffer.from(String(reply.serialize(answer())));
      bodies.set(kept, body);
    }
    return reply.type('application/json; charset=utf-8').send(body);
  };
}
