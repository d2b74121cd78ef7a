// `invite ...` commands: invitations to sign up on the account page (--registration invite).
// A code is shown once, when it is made: the database keeps only its digest, and an id.
import { accountLink } from '../account/links.ts';
import { quote } from '../service/errors.ts';
import type { Service } from '../service/service.ts';
import { DB_OPTIONS } from './options.ts';
import { parseCommandLine, UsageError, type CommandLine } from './usage.ts';
import { noLinkWarning, when, type UserCommandLine, type UserIo } from './user.ts';

export const INVITE_HELP = `Invites (for --registration invite; each takes --db PATH, or MCAUTH_DB, or --config FILE):
  invite create [--uses N] [--expires SECONDS]
      makes an invite for N players (1) that expires after SECONDS (a week); prints its code, shown
      only now, and the account page's link with it when a public URL is set (MCAUTH_PUBLIC_URL,
      or the config file's publicUrl)
  invite list             lists the invites that can still be used: id, uses left, expiry
  invite revoke CODE|ID   deletes an invite, named by its code or the id invite list shows`;

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A whole number given to --NAME, or undefined when it was not given. */
function count(values: CommandLine['values'], name: string): number | undefined {
  const text = values[name];
  if (text === undefined) return undefined;
  if (typeof text !== 'string' || !/^\d+$/.test(text)) throw new UsageError(`--${name} must be a whole number`);
  return Number(text);
}

const COMMANDS = {
  create: {
    options: { ...DB_OPTIONS, uses: { type: 'string' }, expires: { type: 'string' } },
    positionals: [],
    async run(_service: Service, { values }: CommandLine, { stderr, settings, invites }: UserIo): Promise<string> {
      const invite = await invites.create(count(values, 'uses'), count(values, 'expires'));
      const link = accountLink(settings.publicUrl, settings.basePath, 'invite', invite.code);
      if (!link) stderr.write(noLinkWarning('invite'));
      const head = `Invite ${invite.id} for ${plural(invite.usesLeft, 'player')}, valid until ${when(invite.expiresAt)}; its code is shown only now:`;
      return [head, `Code: ${invite.code}`, ...(link ? [`Link: ${link}`] : [])].join('\n');
    },
  },
  list: {
    options: DB_OPTIONS,
    positionals: [],
    async run(_service: Service, _line: CommandLine, io: UserIo): Promise<string> {
      const invites = await io.invites.list();
      if (invites.length === 0) return 'No invites that can still be used';
      return invites.map((i) => `${i.id}  ${plural(i.usesLeft, 'use')} left  expires ${when(i.expiresAt)}  created ${when(i.createdAt)}`).join('\n');
    },
  },
  revoke: {
    options: DB_OPTIONS,
    positionals: ['CODE'],
    async run(_service: Service, { positionals: [codeOrId] }: CommandLine, { invites }: UserIo): Promise<string> {
      return `Revoked invite ${await invites.revoke(codeOrId!)}`;
    },
  },
} as const;

/** Parses `invite <command> ...`, as parseUserCommand does `user ...`. */
export function parseInviteCommand(argv: string[]): UserCommandLine {
  const [name, ...rest] = argv;
  if (name === undefined || !Object.hasOwn(COMMANDS, name)) {
    throw new UsageError(name === undefined ? `invite needs a command: ${Object.keys(COMMANDS).join(', ')}` : `unknown invite command ${quote(name)}`);
  }
  const command = COMMANDS[name as keyof typeof COMMANDS];
  const line = parseCommandLine(rest, command.options, [...command.positionals]);
  return { line, creates: false, run: (service, io) => command.run(service, line, io) };
}
