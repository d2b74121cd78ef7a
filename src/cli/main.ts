// The one program: `serve` (the default) or `user ...`, and how each failure is reported.
import type { Readable, Writable } from 'node:stream';
import { startServer } from '../serve.ts';
import { ServiceError } from '../service/errors.ts';
import { createService } from '../service/service.ts';
import { openStore } from '../store/open.ts';
import type { Synchronous } from '../store/sqlite.ts';
import type { Store } from '../store/store.ts';
import { defaultServiceOptions, optionsHelp, resolveDb, resolveServeConfig, SERVE_OPTION_TYPES } from './options.ts';
import { parseCommandLine, UsageError } from './usage.ts';
import { parseUserCommand, USER_HELP } from './user.ts';

/** Where the program reads and writes: the process's own streams, or a test's. */
export interface Io {
  stdin: Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  stdout: Writable;
  stderr: Writable;
  env: Record<string, string | undefined>;
}

const HELP = `mcauth: an authentication backend for Minecraft launchers (AuroraLauncher's json auth).

Usage:
  node server.js [serve] [options]     start the server
  node server.js user COMMAND ...      manage players

Server options (a flag wins over its environment variable):
${optionsHelp()}
  --help
      prints this text

${USER_HELP}
`;

async function open(db: string, synchronous?: Synchronous): Promise<Store> {
  try {
    return await openStore(db, synchronous);
  } catch (err) {
    throw new Error(`cannot open the database "${db}": ${(err as Error).message}`);
  }
}

async function runUser(argv: string[], io: Io): Promise<number> {
  const { line, run } = parseUserCommand(argv);
  const store = await open(resolveDb(line.values.db, io.env));
  try {
    io.stdout.write(`${await run(createService(store, defaultServiceOptions()), io.stdin, io.stderr)}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

async function runServer(argv: string[], io: Io): Promise<undefined> {
  if (argv[0] !== undefined && !argv[0].startsWith('-')) throw new UsageError(`unknown command "${argv[0]}"`);
  const config = resolveServeConfig(parseCommandLine(argv, SERVE_OPTION_TYPES, []).values, io.env);
  const logError = (message: string, err: unknown): void => {
    io.stderr.write(`mcauth: ${message}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  };
  const running = await startServer(config, await open(config.db, config.synchronous), logError);
  io.stdout.write(`${running.banner}\n`);
  const stop = (): void => {
    io.stdout.write('mcauth stopping: finishing requests in flight\n');
    void running.stop().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return undefined;
}

/** Runs the command line; resolves to an exit status, or undefined while the server runs. */
export async function main(argv: string[], io: Io): Promise<number | undefined> {
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      io.stdout.write(HELP);
      return 0;
    }
    if (argv[0] === 'user') return await runUser(argv.slice(1), io);
    return await runServer(argv[0] === 'serve' ? argv.slice(1) : argv, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`mcauth: ${err.message} (see --help)\n`);
      return 2;
    }
    io.stderr.write(err instanceof ServiceError ? `${err.message}\n` : `mcauth: ${(err as Error).message}\n`);
    return 1;
  }
}
