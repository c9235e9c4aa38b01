/**
 * A real local SMTP server (the smtp-server package) on 127.0.0.1 for tests. It records every
 * accepted message: envelope, raw data, subject, the authenticated user and whether TLS was on.
 */
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { createTestCertificate } from './slapd.js';
import { makeTempDir } from './tmp.js';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** Decoded Subject header, or null when absent. */
  subject: string | null;
  /** The user that logged in, or null without AUTH. */
  user: string | null;
  /** True when the session ran over TLS (implicit or STARTTLS). */
  secure: boolean;
}

export interface TestSmtpOptions {
  /** Require AUTH PLAIN/LOGIN with these credentials. */
  auth?: { user: string; pass: string };
  /** starttls: offer STARTTLS; tls: TLS from the first byte. Both use a fresh self-signed certificate. */
  tls?: 'starttls' | 'tls';
}

export interface TestSmtpServer {
  host: string;
  port: number;
  messages: ReceivedMail[];
  /** Every AUTH attempt, accepted or not, with the credentials the client sent. */
  authAttempts: Array<{ method: string; user: string; pass: string }>;
  /** PEM of the server certificate when TLS is on (to trust it as a CA). */
  caPem?: string;
  close(): Promise<void>;
}

const MAX_MESSAGE = 1024 * 1024;

/** Starts the server on a free port; close() stops it and removes its temp files. */
export async function startSmtpServer(options: TestSmtpOptions = {}): Promise<TestSmtpServer> {
  const messages: ReceivedMail[] = [];
  const authAttempts: TestSmtpServer['authAttempts'] = [];
  const temp = options.tls ? await makeTempDir('tollgate-smtp-') : undefined;
  const cert = temp ? await createTestCertificate(temp.dir) : undefined;
  const disabled = [...(options.auth ? [] : ['AUTH']), ...(options.tls === 'starttls' ? [] : ['STARTTLS'])];
  const config: SMTPServerOptions = {
    secure: options.tls === 'tls',
    ...(cert ? { key: cert.keyPem, cert: cert.certPem } : {}),
    disabledCommands: disabled,
    authMethods: ['PLAIN', 'LOGIN'],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    size: MAX_MESSAGE,
    logger: false,
    onAuth(auth, _session, callback) {
      authAttempts.push({ method: auth.method, user: auth.username ?? '', pass: auth.password ?? '' });
      const expected = options.auth;
      if (expected && auth.username === expected.user && auth.password === expected.pass) {
        callback(null, { user: auth.username });
      } else {
        callback(new Error('Invalid username or password'));
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (stream.sizeExceeded) return callback(new Error('Message too large'));
        const raw = Buffer.concat(chunks).toString('utf8');
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          subject: subjectOf(raw),
          user: typeof session.user === 'string' ? session.user : null,
          secure: session.secure,
        });
        callback();
      });
    },
  };
  const server = new SMTPServer(config);
  server.on('error', () => undefined); // client misbehaviour in negative tests is expected
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('SMTP server has no TCP address');
  return {
    host: '127.0.0.1',
    port: address.port,
    messages,
    authAttempts,
    caPem: cert?.certPem,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await temp?.cleanup();
    },
  };
}

/** The Subject header, unfolded, with RFC 2047 UTF-8 encoded words decoded. */
function subjectOf(raw: string): string | null {
  const headerEnd = raw.search(/\r?\n\r?\n/);
  const headers = (headerEnd === -1 ? raw : raw.slice(0, headerEnd)).replace(/\r?\n[ \t]+/g, ' ');
  const match = /^Subject:[ \t]*(.*)$/im.exec(headers);
  if (!match) return null;
  return (match[1] ?? '')
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?utf-8\?([bq])\?([^?]*)\?=/gi, (_all, encoding: string, text: string) =>
      encoding.toLowerCase() === 'b'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(
            text.replace(/_/g, ' ').replace(/=([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
            'latin1',
          ).toString('utf8'),
    )
    .trim();
}
