import type { Command } from 'commander';
import { isProfileKey, PROFILE_KEYS, type ProfileKey, type ProfileStore } from '../../config/profiles.js';
import { printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';

function checkedKey(key: string): ProfileKey {
  if (!isProfileKey(key)) throw usageError(`Unknown setting '${key}'. Settings: ${PROFILE_KEYS.join(', ')}.`);
  return key;
}

/** Secrets are never printed back, only whether they are set and their last four characters. */
export function maskSetting(key: ProfileKey, value: string | undefined): string | undefined {
  if (value === undefined || key !== 'token') return value;
  return `…${value.slice(-4)}`;
}

function targetProfile(ctx: CommandContext, store: ProfileStore): string {
  return ctx.profileName(store);
}

export function registerConfig(program: Command, ctx: CommandContext): void {
  const config = program
    .command('config')
    .description(`read and change settings profiles (${PROFILE_KEYS.join(', ')})`);

  config
    .command('set')
    .description('set a setting in the current profile (or --profile)')
    .argument('<key>', PROFILE_KEYS.join('|'))
    .argument('<value>')
    .action(async (key: string, value: string) => {
      const store = ctx.profiles();
      const name = targetProfile(ctx, store);
      await store.set(name, checkedKey(key), value);
      if (ctx.json)
        printJson(ctx.io, { object: 'setting', profile: name, key, value: maskSetting(checkedKey(key), value) });
    });

  config
    .command('unset')
    .description('remove a setting from the current profile (or --profile)')
    .argument('<key>', PROFILE_KEYS.join('|'))
    .action(async (key: string) => {
      const store = ctx.profiles();
      const name = targetProfile(ctx, store);
      await store.unset(name, checkedKey(key));
      if (ctx.json) printJson(ctx.io, { object: 'setting', profile: name, key, value: null });
    });

  config
    .command('get')
    .description('print one setting of the current profile (or --profile)')
    .argument('<key>', PROFILE_KEYS.join('|'))
    .action(async (key: string) => {
      const store = ctx.profiles();
      const name = targetProfile(ctx, store);
      const checked = checkedKey(key);
      const value = maskSetting(checked, store.profile(name)[checked]);
      if (ctx.json) return printJson(ctx.io, { object: 'setting', profile: name, key, value: value ?? null });
      if (value !== undefined) ctx.io.stdout.write(`${value}\n`);
    });

  config
    .command('ls')
    .description('list every profile and its settings')
    .action(async () => {
      const store = ctx.profiles();
      const current = store.currentName();
      const names = [...new Set([current, ...store.names()])].sort();
      const profiles = names.map((name) => {
        const profile = store.profile(name);
        const settings = Object.fromEntries(
          PROFILE_KEYS.filter((k) => profile[k] !== undefined).map((k) => [k, maskSetting(k, profile[k])]),
        );
        return { name, current: name === current, settings };
      });
      if (ctx.json)
        return printJson(ctx.io, {
          object: 'list',
          data: profiles.map((p) => ({ object: 'profile', ...p })),
          has_more: false,
        });
      for (const profile of profiles) {
        ctx.io.stdout.write(`${profile.current ? '* ' : '  '}${profile.name}\n`);
        for (const [key, value] of Object.entries(profile.settings)) ctx.io.stdout.write(`    ${key}\t${value}\n`);
      }
    });

  config
    .command('use')
    .description('make a profile the current one')
    .argument('<profile>')
    .action(async (name: string) => {
      const store = ctx.profiles();
      if (!store.names().includes(name)) {
        throw new CliError(
          'profile_not_found',
          `There is no profile '${name}'.`,
          EXIT.usage,
          store.names().length > 0
            ? `Profiles: ${store.names().join(', ')}. Make one with \`lake config set --profile ${name} …\` or \`lake auth login --profile ${name} …\`.`
            : `Make one with \`lake auth login --profile ${name} --base-url URL --token TOKEN\`.`,
        );
      }
      await store.use(name);
      if (ctx.json) printJson(ctx.io, { object: 'profile', name, current: true });
    });
}
