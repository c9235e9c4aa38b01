import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';
import { runs } from '../runtime.js';

interface Verification {
  ok: boolean;
  entries: number;
  files: number;
  first_broken: unknown;
}

export function registerAuditCommands(program: Command): void {
  const audit = program.command('audit').description('The append-only audit trail');

  audit
    .command('verify')
    .description('Check the audit trail\'s hash chain; exits 5 when an entry was altered or removed')
    .action(runs(async (rt) => {
      const client = await rt.client();
      const answer = await client.get<Verification>('/audit/verify');
      rt.out.result(answer, () => (answer.ok
        ? rt.out.colours.green(`audit trail intact: ${answer.entries} entries in ${answer.files} file(s)`)
        : rt.out.colours.red(`audit trail broken at ${JSON.stringify(answer.first_broken)}`)));
      return answer.ok ? EXIT.ok : EXIT.policyViolation;
    }));
}
