import type { Command } from 'commander';
import { createInterface } from 'node:readline';
import { ApiClient } from '../client.js';
import { configPath, normaliseServiceUrl, readStoredConfig, resolveConnection, writeStoredConfig } from '../config.js';
import { CliError, UsageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { runs } from '../runtime.js';

interface Me {
  username: string;
  role: string;
  email: string | null;
  full_name: string | null;
  source?: string;
  mfa_enabled?: boolean;
}

interface TokenAnswer {
  access_token: string;
  expires_in?: number;
  mfa_required?: boolean;
}

export function registerAuthCommands(program: Command): void {
  program
    .command('login')
    .description('Store the service URL and a credential in the config file (mode 0600): a session from a user name and password, or an API token from stdin')
    .option('-u, --username <name>', 'log in with this account (the password is read from stdin, or prompted for on a terminal)')
    .option('--otp <code>', 'the six-digit code, for an account with MFA')
    .option('--token-stdin', 'store the API token read from stdin instead of logging in')
    .action(runs(async (rt, opts: { username?: string; otp?: string; tokenStdin?: boolean }) => {
      const url = rt.options.url ?? process.env.TOLLGATE_URL ?? (await readStoredConfig()).url;
      if (!url) throw new UsageError('pass --url (or set TOLLGATE_URL) the first time');
      const connection = await resolveConnection({ ...rt.options, url, token: undefined }, { ...process.env, TOLLGATE_TOKEN: undefined });
      let token: string;
      let expiresAt: string | undefined;
      if (opts.tokenStdin) {
        token = (await readStdin()).trim();
        if (!token) throw new UsageError('no token on stdin');
      } else {
        if (!opts.username) throw new UsageError('pass --username NAME, or --token-stdin to store an API token');
        const password = process.stdin.isTTY ? await promptHidden('Password: ') : (await readStdin()).replace(/\r?\n$/, '');
        const client = new ApiClient(connection);
        const answer = await client.post<TokenAnswer>('/auth/token', { username: opts.username, password, ...(opts.otp ? { otp: opts.otp } : {}) });
        if (answer.mfa_required || !answer.access_token) throw new CliError('this account uses MFA: run login again with --otp CODE');
        token = answer.access_token;
        if (answer.expires_in) expiresAt = new Date(Date.now() + answer.expires_in * 1000).toISOString();
      }
      // Proves the credential before it is stored.
      const me = await new ApiClient({ ...connection, token }).get<Me>('/auth/me');
      const stored = await readStoredConfig();
      await writeStoredConfig({ ...stored, url: normaliseServiceUrl(url), token, token_expires_at: expiresAt, ca_bundle: connection.caBundle ?? undefined });
      rt.out.result({ username: me.username, role: me.role, url: connection.serviceUrl, config: configPath(), expires_at: expiresAt ?? null }, () =>
        `Logged in to ${connection.serviceUrl} as ${me.username} (${me.role})${expiresAt ? `; the session ends at ${expiresAt}` : ''}. Saved in ${configPath()}.`);
      return EXIT.ok;
    }));

  program
    .command('logout')
    .description('Forget the stored credential (the service URL stays)')
    .action(runs(async (rt) => {
      const { token: _forgotten, token_expires_at: _expiry, ...rest } = await readStoredConfig();
      await writeStoredConfig(rest);
      rt.out.result({ logged_out: true }, () => 'Credential removed.');
      return EXIT.ok;
    }));

  program
    .command('whoami')
    .description('Show the account the credential belongs to')
    .action(runs(async (rt) => {
      const client = await rt.client();
      if (!client.hasToken) throw new UsageError('no credential: run "tollgate login" or set TOLLGATE_TOKEN');
      const me = await client.get<Me>('/auth/me');
      rt.out.result(me, () => `${me.username} (${me.role}) at ${client.serviceUrl}`);
      return EXIT.ok;
    }));
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads a line from the terminal without echoing it. */
function promptHidden(prompt: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    const echo = rl as unknown as { _writeToOutput: (s: string) => void };
    process.stderr.write(prompt);
    echo._writeToOutput = () => {};
    rl.question('', (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
  });
}
