import { connect } from 'node:net';

/** Whether the suite's Redis (127.0.0.1:6379) accepts a connection. */
export const redisAnswers = () => new Promise<boolean>((resolve) => {
  const socket = connect(6379, '127.0.0.1', () => { socket.end(); resolve(true); });
  socket.on('error', () => resolve(false));
});
