import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const PREFIX = 'enc:v1:';

/** AES-256-GCM for secrets at rest (settings, MFA seeds, the signing key passphrase). */
export class SecretBox {
  private readonly key: Buffer;

  constructor(masterSecret: string, purpose: string) {
    this.key = Buffer.from(hkdfSync('sha256', masterSecret, 'tollgate', purpose, 32));
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${PREFIX}${iv.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${body.toString('base64')}`;
  }

  open(sealed: string): string {
    if (!sealed.startsWith(PREFIX)) throw new Error('not a sealed value');
    const [iv, tag, body] = sealed.slice(PREFIX.length).split(':');
    if (!iv || !tag || body === undefined) throw new Error('sealed value is malformed');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
  }

  /** A stable key for purposes that need raw bytes (e.g. a passphrase), derived, never stored. */
  derive(label: string): string {
    return Buffer.from(hkdfSync('sha256', this.key, 'tollgate', label, 32)).toString('base64url');
  }
}
