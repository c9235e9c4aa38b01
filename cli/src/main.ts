#!/usr/bin/env node
/**
 * tollgate: the command-line client of a Tollgate service. It speaks only the public HTTP API,
 * so it runs anywhere a pipeline runs, and its exit codes are the upload's verdict.
 */
import { Command, Option } from 'commander';
import { registerAuditCommands } from './commands/audit.js';
import { registerAuthCommands } from './commands/auth.js';
import { registerDistributionCommands } from './commands/distributions.js';
import { registerHealthCommand } from './commands/health.js';
import { registerImportCommands } from './commands/imports.js';
import { registerReviewCommands } from './commands/review.js';
import { registerSbomCommand } from './commands/sbom.js';
import { registerStatusCommands } from './commands/status.js';
import { registerTokenCommands } from './commands/tokens.js';
import { registerUploadCommand } from './commands/upload.js';
import { registerVulnsCommand } from './commands/vulns.js';
import { EXIT_CODES_HELP } from './exit-codes.js';

const program = new Command('tollgate')
  .description('Upload packages to a Tollgate repository, wait for the verdict, and gate CI on it')
  .version('0.1.0')
  .option('--url <url>', 'the service URL (env TOLLGATE_URL); /api/v1 is added')
  .option('--token <token>', 'an API token or session (env TOLLGATE_TOKEN; prefer the environment, flags show in process lists)')
  .option('--ca-bundle <file>', 'PEM file of the CAs to trust (env TOLLGATE_CA_BUNDLE)')
  .addOption(new Option('--insecure', 'do not verify the service\'s TLS certificate (never the default)'))
  .option('--json', 'print JSON for machines instead of tables')
  .showHelpAfterError()
  .addHelpText('after', `${EXIT_CODES_HELP}\n\nConfiguration: flags, then TOLLGATE_URL / TOLLGATE_TOKEN / TOLLGATE_CA_BUNDLE, then the file "tollgate login" writes.`);

registerAuthCommands(program);
registerUploadCommand(program);
registerStatusCommands(program);
registerVulnsCommand(program);
registerReviewCommands(program);
registerDistributionCommands(program);
registerSbomCommand(program);
registerImportCommands(program);
registerTokenCommands(program);
registerAuditCommands(program);
registerHealthCommand(program);

await program.parseAsync(process.argv);
