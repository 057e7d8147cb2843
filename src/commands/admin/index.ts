import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { registerAdminAudit } from './audit.js';
import { registerAdminCredentials } from './create-credential.js';
import { registerAdminDuckLake } from './ducklake.js';
import { registerAdminGc } from './gc.js';
import { registerAdminOperatorTokens } from './operator-tokens.js';
import { registerAdminOrganizations } from './organizations.js';
import { registerAdminPermissions } from './permissions.js';
import { registerAdminViews } from './views.js';

export function registerAdmin(program: Command, ctx: CommandContext): void {
  const admin = program
    .command('admin')
    .description('operator commands: over the API with --base-url (or a profile), else directly on a home (--home)');
  registerAdminOrganizations(admin, ctx);
  registerAdminOperatorTokens(admin, ctx);
  registerAdminCredentials(admin, ctx);
  registerAdminPermissions(admin, ctx);
  registerAdminViews(admin, ctx);
  registerAdminGc(admin, ctx);
  registerAdminDuckLake(admin, ctx);
  registerAdminAudit(admin, ctx);
}
