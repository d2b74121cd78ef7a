// Databases that cannot be used: a `--db` path in a missing folder, a directory, a text file, and
// a database from a newer schema version; and, for the commands that only read (`user list`,
// `backup`), a path with no file, which they must not create. `serve`, `user list`, `user add` and `backup` each end
// with a non-zero status and one clear message naming the path and the reason (no stack trace),
// and change nothing: no folder or file is created, nothing is written to what is there, and no
// new database appears anywhere else (such as the default mcauth.db in the working folder).
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join as pathJoin, relative } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SCHEMA_VERSION } from '../../src/store/schema.ts';
import { runCli, tempDir } from '../helpers/process.ts';
import type { ProcResult } from '../helpers/process.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

/** Every file and folder under `dir`, with each file's SHA-256: what must not change. */
function snapshot(dir: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (at: string): void => {
    for (const name of readdirSync(at).sort()) {
      const path = pathJoin(at, name);
      const key = relative(dir, path);
      if (statSync(path).isDirectory()) {
        found[`${key}/`] = 'folder';
        walk(path);
      } else {
        found[key] = createHash('sha256').update(readFileSync(path)).digest('hex');
      }
    }
  };
  walk(dir);
  return found;
}

interface BadDb {
  /** What the path is, for the test's name. */
  what: string;
  /** Makes the bad path inside `dir` (a folder of its own) and returns it. */
  make: (dir: string) => string;
  /** The reason the message must give. */
  reason: RegExp;
  /** Checks beyond "nothing under the case's folder changed". */
  after?: (path: string) => void;
  /** Only for commands that never create a database. */
  readersOnly?: boolean;
}

const CASES: BadDb[] = [
  {
    what: 'a path in a missing folder',
    make: (dir) => pathJoin(dir, 'missing', 'deeper', 'auth.db'),
    reason: /unable to open database file\b.*\(its folder does not exist\)/,
    after: (path) => assert.ok(!existsSync(pathJoin(path, '..', '..')), 'the missing folder was created'),
  },
  {
    what: 'a file that does not exist (in a folder that does)',
    make: (dir) => pathJoin(dir, 'typo.db'),
    reason: /there is no database/,
    after: (path) => assert.ok(!existsSync(path), 'the database was created'),
    readersOnly: true,
  },
  {
    // SQLite would take an empty file for a new database: to a reader it is more likely a copy that failed.
    what: 'an empty file',
    make: (dir) => {
      const path = pathJoin(dir, 'empty.db');
      writeFileSync(path, '');
      return path;
    },
    reason: /the file is empty \(a copy that failed\?\); remove it to start a new database/,
    after: (path) => assert.equal(statSync(path).size, 0),
    // serve and user add take it as new: another process creating the database leaves one for an instant.
    readersOnly: true,
  },
  {
    what: 'a directory',
    make: (dir) => {
      const path = pathJoin(dir, 'a-folder.db');
      mkdirSync(path);
      writeFileSync(pathJoin(path, 'keep.txt'), 'a file in the folder\n');
      return path;
    },
    reason: /unable to open database file\b.*\(it is a folder; give a file in it\)/,
    after: (path) => assert.ok(statSync(path).isDirectory()),
  },
  {
    what: 'a text file',
    make: (dir) => {
      const path = pathJoin(dir, 'notes.db');
      writeFileSync(path, 'These are notes, not a database.\n'.repeat(200));
      return path;
    },
    reason: /file is not a database/,
  },
  {
    what: 'a database of a newer schema version',
    make: (dir) => {
      const path = pathJoin(dir, 'future.db');
      const file = new DatabaseSync(path);
      try {
        file.exec('CREATE TABLE from_the_future (x TEXT)');
        file.exec("INSERT INTO from_the_future VALUES ('keep me')");
        file.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
      } finally {
        file.close();
      }
      return path;
    },
    reason: new RegExp(`schema version ${SCHEMA_VERSION + 1}, newer than this program's ${SCHEMA_VERSION}\\b`),
    after: (path) => {
      const file = new DatabaseSync(path);
      try {
        assert.deepEqual({ ...file.prepare('PRAGMA user_version').get() }, { user_version: SCHEMA_VERSION + 1 });
        // Not switched to WAL, not migrated: the file is as it was.
        assert.deepEqual({ ...file.prepare('PRAGMA journal_mode').get() }, { journal_mode: 'delete' });
        assert.deepEqual(file.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => ({ ...r })), [{ name: 'from_the_future' }]);
      } finally {
        file.close();
      }
    },
  },
];

interface Command {
  name: string;
  /** Whether the command creates a missing database (serve, user add) or refuses the path. */
  creates: boolean;
  /** The command line for `db`; `out` is a folder of its own for any file it would write. */
  args: (db: string, out: string) => string[];
  stdin?: string;
}

const COMMANDS: Command[] = [
  { name: 'serve', creates: true, args: (db) => ['serve', '--port', '0', '--db', db] },
  { name: 'user list', creates: false, args: (db) => ['user', 'list', '--db', db] },
  { name: 'user add', creates: true, args: (db) => ['user', 'add', 'Nobody', '--db', db], stdin: 'nobody-pw\n' },
  { name: 'backup', creates: false, args: (db, out) => ['backup', pathJoin(out, 'copy.db'), '--db', db] },
];

let n = 0;
for (const bad of CASES) {
  describe(`--db is ${bad.what}`, () => {
    for (const command of COMMANDS.filter((c) => !(bad.readersOnly && c.creates))) {
      // Rule: a clear message (path and reason, no stack trace), a non-zero status, and nothing
      // created or changed, neither at the path nor anywhere else.
      test(`${command.name}: a clear message, a non-zero status, nothing changed`, async () => {
        const dir = pathJoin(tmp.dir, `case-${++n}`);
        const out = pathJoin(tmp.dir, `out-${n}`);
        const cwd = pathJoin(tmp.dir, `cwd-${n}`);
        for (const d of [dir, out, cwd]) mkdirSync(d);
        const path = bad.make(dir);
        const before = snapshot(dir);

        const r: ProcResult = await runCli(command.args(path, out), { cwd, stdin: command.stdin ?? '', timeoutMs: 60_000 });
        const all = `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
        assert.equal(r.timedOut, false, `${command.name} kept running (it served?)\n${all}`);
        assert.notEqual(r.code, 0, `exit 0\n${all}`);
        assert.equal(r.code, 1, `exit ${r.code}\n${all}`);
        assert.doesNotMatch(r.stdout, /listening on/, all);
        if (!command.creates && !existsSync(path)) {
          // A command that only reads says there is nothing there before SQLite is asked.
          assert.equal(r.stderr, `mcauth: there is no database at "${path}"\n`, all);
        } else {
          assert.ok(r.stderr.includes(`cannot open the database "${path}"`), `the message does not name "${path}"\n${all}`);
          assert.match(r.stderr, bad.reason, all);
        }
        assert.doesNotMatch(r.stderr, /^\s+at /m, `a stack trace\n${all}`);
        assert.equal(r.stderr.trim().split('\n').length, 1, `one line of message\n${all}`);

        assert.deepEqual(snapshot(dir), before, 'files at or beside the path changed');
        assert.deepEqual(readdirSync(out), [], 'the command wrote a file');
        assert.deepEqual(readdirSync(cwd), [], 'a database appeared in the working folder');
        bad.after?.(path);
      });
    }
  });
}
