// The one program: `serve` (the default) or `user ...`, and how each failure is reported.
import { ServiceError } from '../service/errors.ts';
import { createService } from '../service/service.ts';
import { serve } from '../serve.ts';
import { openStore } from '../store/open.ts';
import type { Store } from '../store/store.ts';
import { optionsHelp, resolveDb, resolveServeConfig, SERVE_OPTION_TYPES } from './options.ts';
import { parseCommandLine, UsageError } from './usage.ts';
import { parseUserCommand, USER_HELP } from './user.ts';

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

async function open(db: string): Promise<Store> {
  try {
    return await openStore(db);
  } catch (err) {
    throw new Error(`cannot open the database "${db}": ${(err as Error).message}`);
  }
}

async function runUser(argv: string[]): Promise<number> {
  const { line, run } = parseUserCommand(argv);
  const store = await open(resolveDb(line.values.db, process.env));
  try {
    // Account commands use no setting of the server's; its defaults will do.
    const service = createService(store, resolveServeConfigDefaults());
    process.stdout.write(`${await run(service)}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

function resolveServeConfigDefaults() {
  const { variant, joinTtl, tokenTtl, maxProfiles } = resolveServeConfig({}, {});
  return { variant, joinTtlSeconds: joinTtl, tokenTtlSeconds: tokenTtl, maxProfiles };
}

/** Runs the command line; resolves to an exit status, or undefined while the server runs. */
export async function main(argv: string[]): Promise<number | undefined> {
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      process.stdout.write(HELP);
      return 0;
    }
    if (argv[0] === 'user') return await runUser(argv.slice(1));
    const rest = argv[0] === 'serve' ? argv.slice(1) : argv;
    if (rest[0] !== undefined && !rest[0].startsWith('-')) throw new UsageError(`unknown command "${rest[0]}"`);
    const config = resolveServeConfig(parseCommandLine(rest, SERVE_OPTION_TYPES, []).values, process.env);
    await serve(config, await open(config.db));
    return undefined;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`mcauth: ${err.message} (see --help)\n`);
      return 2;
    }
    process.stderr.write(err instanceof ServiceError ? `${err.message}\n` : `mcauth: ${(err as Error).message}\n`);
    return 1;
  }
}
