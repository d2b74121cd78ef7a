// `user ...` commands: managing players in the database of a (possibly running) server.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { MAX_TEXTURE_BYTES } from '../textures/limits.ts';
import type { Writable } from 'node:stream';
import { quote, ServiceError } from '../service/errors.ts';
import { uploadSizeProblem } from '../textures/rules.ts';
import type { Service } from '../service/service.ts';
import type { Invites } from '../invites/invites.ts';
import type { TextureChange, User } from '../store/store.ts';
import { accountLink } from '../account/links.ts';
import { readNewPassword, type PasswordInput } from './password-input.ts';
import { DB_OPTIONS, type ServeConfig } from './options.ts';
import { parseCommandLine, UsageError, type CommandLine } from './usage.ts';
import { setHostedTexture } from '../textures/hosted.ts';

export const USER_HELP = `Commands (each takes --db PATH, or MCAUTH_DB, or --config FILE for its db and settings,
and ends its output with "Database: /absolute/path", or "Created a new database at ...", also when it
refuses a player or value; a malformed command line is refused before any database is opened):
  user add NAME [--uuid UUID | --offline-uuid]
      adds a player; the password is prompted for, or read from the first line of standard input
  user passwd NAME        sets a new password and ends the player's sessions
  user remove NAME        removes the player
  user list               lists every player: name, UUID, textures, created, last login, lock
  user show NAME          shows one player, every field but the password hash
  user lock NAME [--reason TEXT]
      locks the player (kept, but no login or join) and ends their sessions; the reason is shown at login
  user unlock NAME        lifts the lock
  user rename NAME NEW    gives the player a new name; UUID and textures stay, sessions end
  user set NAME [--skin-url URL] [--cape-url URL] [--slim | --classic] [--no-skin] [--no-cape]
      sets or clears the player's textures and arm model
  user skin NAME FILE.png [--slim | --classic] [--hd-textures]
  user cape NAME FILE.png [--hd-textures]
      stores a PNG as the player's hosted skin or cape (served at {--public-url}{base}/textures/{hash});
      warns when no public URL is set in the environment or config file
  user reset-link NAME
      prints a one-time link to the account page that sets a new password (the code alone
      without a public URL), valid for the reset TTL; it voids the player's earlier link
  (These commands take the public URL and the reset TTL from MCAUTH_PUBLIC_URL and
  MCAUTH_RESET_TTL, or the config file's publicUrl and resetTtl, as the server would.)`;

/** What a command reads and writes besides the service: the password input, warnings, the settings in effect. */
export interface UserIo {
  stdin: PasswordInput;
  stderr: Writable;
  settings: ServeConfig;
  /** The database's invites (the `invite` commands). */
  invites: Invites;
}

/** The commands: how each parses its arguments and what it does with the service. */
const COMMANDS = {
  add: {
    options: { ...DB_OPTIONS, uuid: { type: 'string' }, 'offline-uuid': { type: 'boolean' } },
    positionals: ['NAME'],
    async run(service: Service, { values, positionals: [name] }: CommandLine, { stdin, stderr }: UserIo): Promise<string> {
      if (values.uuid !== undefined && values['offline-uuid']) throw new UsageError('give --uuid or --offline-uuid, not both');
      const password = await readNewPassword(stdin, stderr);
      const user = await service.addUser({ name: name!, password, uuid: values.uuid as string | undefined, offlineUuid: values['offline-uuid'] === true });
      return `Added ${user.name} ${user.id}`;
    },
  },
  passwd: {
    options: DB_OPTIONS,
    positionals: ['NAME'],
    async run(service: Service, { positionals: [name] }: CommandLine, { stdin, stderr }: UserIo): Promise<string> {
      const user = await service.changePassword(name!, await readNewPassword(stdin, stderr));
      return `Changed the password of ${user.name}; their sessions have ended`;
    },
  },
  remove: {
    options: DB_OPTIONS,
    positionals: ['NAME'],
    async run(service: Service, { positionals: [name] }: CommandLine): Promise<string> {
      return `Removed ${(await service.removeUser(name!)).name}`;
    },
  },
  list: {
    options: DB_OPTIONS,
    positionals: [],
    async run(service: Service): Promise<string> {
      const users = await service.listUsers();
      return users.length === 0 ? 'No players yet' : users.map(describe).join('\n');
    },
  },
  show: {
    options: DB_OPTIONS,
    positionals: ['NAME'],
    async run(service: Service, { positionals: [name] }: CommandLine): Promise<string> {
      return details(await service.findUser(name!));
    },
  },
  lock: {
    options: { ...DB_OPTIONS, reason: { type: 'string' } },
    positionals: ['NAME'],
    async run(service: Service, { values, positionals: [name] }: CommandLine): Promise<string> {
      const user = await service.lockUser(name!, values.reason as string | undefined);
      return `Locked ${user.name}; their sessions have ended`;
    },
  },
  unlock: {
    options: DB_OPTIONS,
    positionals: ['NAME'],
    async run(service: Service, { positionals: [name] }: CommandLine): Promise<string> {
      return `Unlocked ${(await service.unlockUser(name!)).name}`;
    },
  },
  rename: {
    options: DB_OPTIONS,
    positionals: ['NAME', 'NEW'],
    async run(service: Service, { positionals: [name, next] }: CommandLine): Promise<string> {
      const before = await service.findUser(name!);
      const user = await service.renameUser(before.id, next!);
      return `Renamed ${before.name} to ${user.name} (${user.id})`;
    },
  },
  set: {
    options: {
      ...DB_OPTIONS,
      'skin-url': { type: 'string' },
      'cape-url': { type: 'string' },
      slim: { type: 'boolean' },
      classic: { type: 'boolean' },
      'no-skin': { type: 'boolean' },
      'no-cape': { type: 'boolean' },
    },
    positionals: ['NAME'],
    async run(service: Service, { values, positionals: [name] }: CommandLine): Promise<string> {
      const user = await service.setTextures(name!, textureChange(values));
      return `Updated ${user.name}: ${describe(user)}`;
    },
  },
  skin: {
    options: { ...DB_OPTIONS, slim: { type: 'boolean' }, classic: { type: 'boolean' }, 'hd-textures': { type: 'boolean' } },
    positionals: ['NAME', 'FILE'],
    run: (service: Service, line: CommandLine, io: UserIo) => upload(service, line, io, 'skin'),
  },
  cape: {
    options: { ...DB_OPTIONS, 'hd-textures': { type: 'boolean' } },
    positionals: ['NAME', 'FILE'],
    run: (service: Service, line: CommandLine, io: UserIo) => upload(service, line, io, 'cape'),
  },
  'reset-link': {
    options: DB_OPTIONS,
    positionals: ['NAME'],
    async run(service: Service, { positionals: [name] }: CommandLine, { stderr, settings }: UserIo): Promise<string> {
      const { user, code, expiresAt } = await service.createResetCode(name!);
      const link = accountLink(settings.publicUrl, settings.basePath, 'reset', code);
      if (!link) stderr.write(noLinkWarning('reset'));
      return `Reset link for ${user.name}, valid once until ${when(expiresAt)}; any earlier one is void:\n${link ?? code}`;
    },
  },
} as const;

/** Said when a code is printed without its link: where the public URL is read from, and how to make the link by hand. */
export const noLinkWarning = (kind: 'invite' | 'reset'): string =>
  `mcauth: warning: no public URL in MCAUTH_PUBLIC_URL or a --config file: the link is the account page's address ({--public-url}{base}/account) followed by #${kind}= and this code\n`;

async function upload(service: Service, { values, positionals: [name, file] }: CommandLine, { stderr, settings }: UserIo, kind: 'skin' | 'cape'): Promise<string> {
  if (values.slim && values.classic) throw new UsageError('give --slim or --classic, not both');
  let bytes: Buffer;
  try {
    bytes = readAtMost(file!, MAX_TEXTURE_BYTES + 1);
  } catch (err) {
    throw new Error(`cannot read ${quote(file!)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const size = bytes.length > MAX_TEXTURE_BYTES ? statSync(file!).size : bytes.length;
  const tooBig = uploadSizeProblem(Math.max(size, bytes.length));
  if (tooBig) throw new ServiceError('invalid', tooBig);
  const isAlex = values.slim ? true : values.classic ? false : undefined;
  const user = await setHostedTexture(service, name!, { kind, bytes, hd: values['hd-textures'] === true || settings.hdTextures, ...(isAlex === undefined ? {} : { isAlex }) });
  // The server's flags may set it, which this command cannot see; say what happens if they do not.
  if (settings.publicUrl === '') {
    stderr.write(`mcauth: warning: no public URL in MCAUTH_PUBLIC_URL or a --config file: a server started without --public-url leaves this ${kind} out of its answers\n`);
  }
  return `Updated ${user.name}: ${describe(user)}`;
}

/** Up to `limit` bytes of a file; a pipe or device that never ends is read no further. */
function readAtMost(file: string, limit: number): Buffer {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(limit);
    let length = 0;
    for (let n; length < limit && (n = readSync(fd, buffer, length, limit - length, null)) > 0; ) length += n;
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

function textureChange(values: CommandLine['values']): TextureChange {
  const change: TextureChange = {};
  const pick = (set: string, clear: string, key: 'skinUrl' | 'capeUrl'): void => {
    if (values[set] !== undefined && values[clear]) throw new UsageError(`give --${set} or --${clear}, not both`);
    if (typeof values[set] === 'string') change[key] = values[set];
    if (values[clear]) change[key] = null;
  };
  pick('skin-url', 'no-skin', 'skinUrl');
  pick('cape-url', 'no-cape', 'capeUrl');
  if (values.slim && values.classic) throw new UsageError('give --slim or --classic, not both');
  if (values.slim) change.isAlex = true;
  if (values.classic) change.isAlex = false;
  if (Object.keys(change).length === 0) throw new UsageError('nothing to change: give at least one option');
  return change;
}

/** A time as the CLI shows it: UTC, to the second. */
export const when = (ms: number | null): string => (ms === null ? 'never' : `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`);

const skinOf = (user: User): string | undefined =>
  user.skinUrl !== null ? `${user.skinUrl} (${user.isAlex ? 'slim' : 'classic'})` : user.skinHash !== null ? `hosted ${user.skinHash} (${user.isAlex ? 'slim' : 'classic'})` : undefined;
const capeOf = (user: User): string | undefined => (user.capeUrl !== null ? user.capeUrl : user.capeHash !== null ? `hosted ${user.capeHash}` : undefined);
const lockOf = (user: User): string => `locked since ${when(user.lockedAt)}${user.lockReason ? `: ${user.lockReason}` : ''}`;

/** One line a player, for `user list`. */
function describe(user: User): string {
  const parts = [user.name, user.id];
  const skin = skinOf(user);
  const cape = capeOf(user);
  if (skin) parts.push(`skin ${skin}`);
  if (cape) parts.push(`cape ${cape}`);
  parts.push(`created ${when(user.createdAt)}`, `last login ${when(user.lastLoginAt)}`);
  if (user.lockedAt !== null) parts.push(lockOf(user));
  return parts.join('  ');
}

/** Every field but the password hash, one a line, for `user show`. */
function details(user: User): string {
  const rows: [string, string][] = [
    ['name', user.name],
    ['uuid', user.id],
    ['skin', skinOf(user) ?? 'none'],
    ['cape', capeOf(user) ?? 'none'],
    ['created', when(user.createdAt)],
    ['last login', when(user.lastLoginAt)],
    ['lock', user.lockedAt === null ? 'not locked' : lockOf(user)],
  ];
  return rows.map(([k, v]) => `${`${k}:`.padEnd(12)}${v}`).join('\n');
}

export type UserCommand = keyof typeof COMMANDS;

/** Parses `user <command> ...`: the parsed line (with its --db) and how to run it. */
export interface UserCommandLine {
  line: CommandLine;
  /** Whether the command may create the database: only `add`, the first thing done on a new host. */
  creates: boolean;
  run: (service: Service, io: UserIo) => Promise<string>;
}

export function parseUserCommand(argv: string[]): UserCommandLine {
  const [name, ...rest] = argv;
  if (name === undefined || !Object.hasOwn(COMMANDS, name)) {
    throw new UsageError(name === undefined ? `user needs a command: ${Object.keys(COMMANDS).join(', ')}` : `unknown user command ${quote(name)}`);
  }
  const command = COMMANDS[name as UserCommand];
  const line = parseCommandLine(rest, command.options, [...command.positionals]);
  return { line, creates: name === 'add', run: (service, io) => command.run(service, line, io) };
}
