// The readers of `import SOURCE`: each format's rows from fixtures built here with the real
// schemas (AuthMe's SQLite.java, drasl's GORM models), guessing the format, and the refusals of
// files that cannot be read as asked.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { guessFormat, type ImportRow, ImportSourceError, readSource, type SourceFormat } from '../../src/import/read/rows.ts';
import { AUTHME_SCHEMA, DRASL_SCHEMA } from '../helpers/import-fixtures.ts';
import { tempDir } from '../helpers/process.ts';

const { dir, cleanup } = tempDir();
after(cleanup);

let files = 0;
/** Writes `content` to a new file named after `name` and returns its path. */
function file(name: string, content: string | Buffer): string {
  const path = join(dir, `${++files}-${name}`);
  writeFileSync(path, content);
  return path;
}

/** A new SQLite database made by `sql`, closed again. */
function database(name: string, sql: string, fill?: (db: DatabaseSync) => void): string {
  const path = join(dir, `${++files}-${name}`);
  const db = new DatabaseSync(path);
  db.exec(sql);
  fill?.(db);
  db.close();
  return path;
}

/** Asserts that `read` throws an ImportSourceError whose message matches every pattern. */
function refuses(read: () => unknown, ...patterns: RegExp[]): void {
  assert.throws(read, (err: unknown) => {
    assert.ok(err instanceof ImportSourceError, `an ImportSourceError, not ${String(err)}`);
    for (const pattern of patterns) assert.match(err.message, pattern);
    return true;
  });
}

// Hashes as AuthMe writes them: its default SHA256 ($SHA$salt$hash) and BCRYPT.
const SHA_HASH = '$SHA$a2b6e8c0d4f1e3b5$0d7b6a1d3c7a2e2b6f4c4ed1d7a3e1f9e1c9b2d5a6b8c7d0e1f2a3b4c5d6e7f8';
const BCRYPT_HASH = '$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';

// -- AuthMe --------------------------------------------------------------------------------------


/** The players of the AuthMe fixtures, as [username, realname, password], and the rows expected of them. */
const AUTHME_PLAYERS: [string, string | null, string][] = [
  ['steve', 'Steve', SHA_HASH],
  ['alex_2', '', BCRYPT_HASH], // no spelling kept: the login name
  ['notch', 'Player', SHA_HASH], // AuthMe's placeholder until the player joins again
  ['player', 'Player', BCRYPT_HASH], // a player really named Player
  ['jeb_', 'jeb_', ''], // no password: still a row, for the caller to report
];
const AUTHME_NAMES = ['Steve', 'alex_2', 'notch', 'Player', 'jeb_'];

function authmeDatabase(): string {
  return database('authme.db', AUTHME_SCHEMA, (db) => {
    const insert = db.prepare('INSERT INTO authme (username, realname, password, ip, regdate, email, totp) VALUES (?, ?, ?, ?, ?, ?, ?)');
    for (const [username, realname, password] of AUTHME_PLAYERS) insert.run(username, realname, password, '203.0.113.7', 1700000000000, null, 'JBSWY3DPEHPK3PXP');
  });
}

/** AuthMe's MySQL columns in its order, as a CSV export names them. */
const AUTHME_COLUMNS = ['id', 'username', 'realname', 'password', 'ip', 'lastlogin', 'x', 'y', 'z', 'world', 'regdate', 'regip', 'yaw', 'pitch', 'email', 'isLogged', 'hasSession', 'totp'];

/** A phpMyAdmin-style CSV export: every field quoted, NULL unquoted, CRLF line ends. */
function authmeCsv(): string {
  const lines = [AUTHME_COLUMNS.map((c) => `"${c}"`).join(',')];
  AUTHME_PLAYERS.forEach(([username, realname, password], i) => {
    const values = [String(i + 1), username, realname, password, '203.0.113.7', '1700000000000', '0', '64', '0', 'world', '1700000000000', '203.0.113.7', '0', '0'];
    lines.push(`${values.map((v) => (v === null ? 'NULL' : `"${v}"`)).join(',')},NULL,"0","0",NULL`);
  });
  return `${lines.join('\r\n')}\r\n`;
}

describe('authme', () => {
  test("the SQLite file: each player's name and hash, the real name's spelling when it is the same name", () => {
    const rows = readSource(authmeDatabase(), 'authme');
    assert.deepEqual(rows.map((r) => r.name), AUTHME_NAMES);
    assert.deepEqual(rows.map((r) => r.hash), AUTHME_PLAYERS.map(([, , hash]) => hash));
    assert.deepEqual(rows[0], { where: 'row 1', name: 'Steve', hash: SHA_HASH }); // no uuid: AuthMe keeps none
  });

  test('a CSV export of the MySQL table: quoted fields, NULL, CRLF', () => {
    const rows = readSource(file('authme.csv', authmeCsv()), 'authme');
    assert.deepEqual(rows.map((r) => r.name), AUTHME_NAMES);
    assert.deepEqual(rows.map((r) => r.hash), AUTHME_PLAYERS.map(([, , hash]) => hash));
    assert.equal(rows[0]!.where, 'line 2');
  });

  test('a TSV export (mysql --batch): NULL and \\N realname fall back to the login name', () => {
    const tsv = 'id\tusername\trealname\tpassword\ttotp\n1\tsteve\tSteve\t' + SHA_HASH + '\tNULL\n2\therobrine\tNULL\t' + BCRYPT_HASH + '\tNULL\n\n3\tdinnerbone\t\\N\t\\N\t\\N\n';
    const rows = readSource(file('authme.tsv', tsv), 'authme');
    assert.deepEqual(rows, [
      { where: 'line 2', name: 'Steve', hash: SHA_HASH },
      { where: 'line 3', name: 'herobrine', hash: BCRYPT_HASH },
      { where: 'line 5', name: 'dinnerbone', hash: '' },
    ]);
  });

  test('a real name that is another name than the login name gives way to the login name', () => {
    const rows = readSource(file('authme.csv', `username,realname,password\nsteve,Herobrine,${SHA_HASH}\n`), 'authme');
    assert.equal(rows[0]!.name, 'steve');
  });

  test('an export without a password column is refused', () => {
    refuses(() => readSource(file('authme.csv', 'id,username,realname\n1,steve,Steve\n'), 'authme'), /authme\.csv: line 1: no column "password"/);
  });
});

// -- drasl ---------------------------------------------------------------------------------------


/** drasl 1.x and 2.x (schema version 3, sql/3.sql): one player per user, in the users row. */
const DRASL_V3_SCHEMA = `
  PRAGMA user_version = 3;
  CREATE TABLE \`users\` (\`is_admin\` numeric,\`is_locked\` numeric,\`uuid\` text,\`username\` text NOT NULL UNIQUE,\`password_salt\` blob NOT NULL,\`password_hash\` blob NOT NULL,\`server_id\` text,\`player_name\` text collate nocase NOT NULL UNIQUE,\`offline_uuid\` text NOT NULL,\`fallback_player\` text,\`preferred_language\` text,\`browser_token\` text,\`api_token\` text,\`skin_hash\` text,\`skin_model\` text,\`cape_hash\` text,\`created_at\` datetime,\`name_last_changed_at\` datetime,PRIMARY KEY (\`uuid\`));
  CREATE TABLE \`clients\` (\`uuid\` text,\`client_token\` text,\`version\` integer,\`user_uuid\` text,PRIMARY KEY (\`uuid\`),CONSTRAINT \`fk_users_clients\` FOREIGN KEY (\`user_uuid\`) REFERENCES \`users\`(\`uuid\`));
  CREATE TABLE \`invites\` (\`code\` text,\`created_at\` datetime,PRIMARY KEY (\`code\`))`;

/** A drasl password as the reader gives it: scrypt's salt and hash in base64 after the scheme. */
const draslHash = (salt: Buffer, hash: Buffer): string => `drasl-scrypt$${salt.toString('base64')}$${hash.toString('base64')}`;

// drasl's salts are 16 random bytes, its hashes 32 (scrypt's key length there).
const KIM = { uuid: 'c3a1a2b4-2d3e-4f50-8a61-7b8c9d0e1f20', salt: randomBytes(16), hash: randomBytes(32) };
const LEE = { uuid: '5e0f5d9a-7c41-4b8e-9e0a-1f2b3c4d5e6f', salt: randomBytes(16), hash: randomBytes(32) };

function draslDatabase(): string {
  return database('drasl.db', DRASL_SCHEMA, (db) => {
    const user = db.prepare('INSERT INTO users (is_admin, is_locked, uuid, username, password_salt, password_hash, minecraft_token, api_token, preferred_language, max_player_count) VALUES (0, 0, ?, ?, ?, ?, ?, ?, ?, -1)');
    user.run(KIM.uuid, 'kim', KIM.salt, KIM.hash, 'mc-token', 'api-token-kim', 'en');
    user.run(LEE.uuid, 'lee', LEE.salt, LEE.hash, 'mc-token-2', 'api-token-lee', 'en');
    user.run('0b1c2d3e-4f50-4617-8a9b-0c1d2e3f4a5b', 'oidc-only', null, null, 'mc-token-3', 'api-token-3', 'en');
    user.run('7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2918', 'no-players', randomBytes(16), randomBytes(32), 'mc-token-4', 'api-token-4', 'en');
    const player = db.prepare("INSERT INTO players (uuid, name, offline_uuid, created_at, name_last_changed_at, skin_hash, skin_model, user_uuid) VALUES (?, ?, ?, '2025-01-02 03:04:05', '2025-01-02 03:04:05', ?, ?, ?)");
    player.run('9b2f6b7e-0c1d-4e2f-8a3b-4c5d6e7f8091', 'Kim', '0d6a1c5f-0c8b-3c1e-9c6b-2b1f0e4d7a11', 'ab'.repeat(32), 'slim', KIM.uuid);
    player.run('1a2b3c4d-5e6f-4081-92a3-b4c5d6e7f809', 'KimAlt', '4e1a9d7c-6b2f-3e80-a1c2-d3e4f5061728', null, 'classic', KIM.uuid);
    player.run('2b3c4d5e-6f70-4192-a3b4-c5d6e7f80912', 'Lee', '8c7b6a59-4837-3261-9f8e-7d6c5b4a3928', null, 'classic', LEE.uuid);
    player.run('3c4d5e6f-7081-42a3-b4c5-d6e7f8091a2b', 'Oidc', '6b5a4938-2716-3504-8f3e-2d1c0b9a8f7e', null, 'classic', '0b1c2d3e-4f50-4617-8a9b-0c1d2e3f4a5b');
  });
}

describe('drasl', () => {
  test("each player (schema version 6): name, UUID kept, its user's salt and hash, slim as isAlex", () => {
    assert.deepEqual(readSource(draslDatabase(), 'drasl'), [
      { where: 'player 9b2f6b7e-0c1d-4e2f-8a3b-4c5d6e7f8091', name: 'Kim', uuid: '9b2f6b7e-0c1d-4e2f-8a3b-4c5d6e7f8091', hash: draslHash(KIM.salt, KIM.hash), isAlex: true },
      { where: 'player 1a2b3c4d-5e6f-4081-92a3-b4c5d6e7f809', name: 'KimAlt', uuid: '1a2b3c4d-5e6f-4081-92a3-b4c5d6e7f809', hash: draslHash(KIM.salt, KIM.hash), isAlex: false },
      { where: 'player 2b3c4d5e-6f70-4192-a3b4-c5d6e7f80912', name: 'Lee', uuid: '2b3c4d5e-6f70-4192-a3b4-c5d6e7f80912', hash: draslHash(LEE.salt, LEE.hash), isAlex: false },
      // A user who signs in through OIDC only has no password: an empty hash, for the caller to report.
      { where: 'player 3c4d5e6f-7081-42a3-b4c5-d6e7f8091a2b', name: 'Oidc', uuid: '3c4d5e6f-7081-42a3-b4c5-d6e7f8091a2b', hash: '', isAlex: false },
    ]);
  });

  test('drasl 1.x and 2.x (schema version 3): the player in the users row', () => {
    const path = database('drasl-2.db', DRASL_V3_SCHEMA, (db) => {
      db.prepare("INSERT INTO users (is_admin, is_locked, uuid, username, password_salt, password_hash, player_name, offline_uuid, skin_model, api_token) VALUES (0, 0, ?, 'kim', ?, ?, 'Kim', 'x', 'slim', 't')").run(KIM.uuid, KIM.salt, KIM.hash);
    });
    assert.deepEqual(readSource(path, 'drasl'), [{ where: `user ${KIM.uuid}`, name: 'Kim', uuid: KIM.uuid, hash: draslHash(KIM.salt, KIM.hash), isAlex: true }]);
  });

  test('a SQLite file without drasl\'s tables, or a text file, is refused', () => {
    refuses(() => readSource(authmeDatabase(), 'drasl'), /authme\.db: not drasl's database: no table "users"/);
    refuses(() => readSource(file('players.csv', 'name,hash\n'), 'drasl'), /players\.csv: not a SQLite database/);
  });
});

// -- csv -----------------------------------------------------------------------------------------

describe('csv', () => {
  test('the columns in any order and case, comma separated, quotes, BOM, CRLF; optional columns left unset when empty', () => {
    const text = '\uFEFFhash,Name,uuid,skinUrl,capeUrl,isAlex\r\n' +
      `"${BCRYPT_HASH}",Steve,069a79f4-44e9-4726-a5be-fad4f6ac8b9f,https://textures.example/s.png,,true\r\n` +
      `"with ""quotes"", a comma\r\nand a line break",Alex,,,,0\r\n` +
      '\r\n' +
      `${SHA_HASH},Notch,,,,\r\n`;
    assert.deepEqual(readSource(file('players.csv', text), 'csv'), [
      { where: 'line 2', name: 'Steve', hash: BCRYPT_HASH, uuid: '069a79f4-44e9-4726-a5be-fad4f6ac8b9f', skinUrl: 'https://textures.example/s.png', isAlex: true },
      { where: 'line 3', name: 'Alex', hash: 'with "quotes", a comma\r\nand a line break', isAlex: false },
      { where: 'line 6', name: 'Notch', hash: SHA_HASH },
    ]);
  });

  test('tab separated, LF; empty name and hash still give rows', () => {
    const rows = readSource(file('players.tsv', `name\thash\tisAlex\nSteve\t${SHA_HASH}\tFALSE\n\t\t\n`), 'csv');
    assert.deepEqual(rows, [
      { where: 'line 2', name: 'Steve', hash: SHA_HASH, isAlex: false },
      { where: 'line 3', name: '', hash: '' },
    ]);
  });

  test('an unknown column is refused by name, not skipped', () => {
    refuses(() => readSource(file('players.csv', 'name,hash,skin_url,cape\nSteve,x,y,z\n'), 'csv'), /players\.csv: line 1: unknown columns "skin_url", "cape"; the columns are name, hash/);
  });

  test('a header without hash, or without name, is refused', () => {
    refuses(() => readSource(file('players.csv', 'name,uuid\nSteve,\n'), 'csv'), /line 1: no column "hash"/);
    refuses(() => readSource(file('players.csv', 'hash\nx\n'), 'csv'), /line 1: no column "name"/);
    refuses(() => readSource(file('empty.csv', ''), 'csv'), /empty\.csv: the file is empty/);
  });

  test('broken quoting and rows of the wrong width are refused at their line', () => {
    refuses(() => readSource(file('players.csv', 'name,hash\nSteve,x\nAlex,"never closed\nNotch,y\n'), 'csv'), /players\.csv: line 3, field 2: a quote opens a field that is never closed/);
    refuses(() => readSource(file('players.csv', 'name,hash\nSteve,"x"y\n'), 'csv'), /line 2, field 2: text after the closing quote/);
    refuses(() => readSource(file('players.csv', 'name,hash\nSt"eve,x\n'), 'csv'), /line 2, field 1: a quote inside an unquoted field; quote the whole field/);
    refuses(() => readSource(file('players.csv', 'name,hash\nSteve,x,y\n'), 'csv'), /line 2 has 3 fields, the header has 2/);
  });

  test('isAlex other than true, false, 1, 0 or empty is refused', () => {
    refuses(() => readSource(file('players.csv', 'name,hash,isAlex\nSteve,x,yes\n'), 'csv'), /line 2: isAlex is "yes"/);
  });

  test('a file that is not UTF-8 is refused, not decoded to replacement characters', () => {
    refuses(() => readSource(file('latin1.csv', Buffer.from('name,hash\nJos\xe9,x\n', 'latin1')), 'csv'), /latin1\.csv: not UTF-8 text/);
  });

  test('a SQLite file asked for as csv is refused', () => {
    refuses(() => readSource(authmeDatabase(), 'csv'), /a SQLite database, not csv text; try --format authme or --format drasl/);
  });
});

// -- json ----------------------------------------------------------------------------------------

describe('json', () => {
  const STEVE = { name: 'Steve', hash: SHA_HASH, uuid: '069a79f4-44e9-4726-a5be-fad4f6ac8b9f', skinUrl: 'https://textures.example/s.png', capeUrl: 'https://textures.example/c.png', isAlex: false };

  test('an array of rows, or { "players": [...] }; null and "" leave an optional key unset', () => {
    const rows: ImportRow[] = [
      { where: 'row 1', ...STEVE },
      { where: 'row 2', name: 'Alex', hash: BCRYPT_HASH },
    ];
    const second = { name: 'Alex', hash: BCRYPT_HASH, uuid: null, skinUrl: '', isAlex: null };
    assert.deepEqual(readSource(file('players.json', JSON.stringify([STEVE, second])), 'json'), rows);
    assert.deepEqual(readSource(file('players.json', `\uFEFF${JSON.stringify({ players: [STEVE, second] }, null, 2)}`), 'json'), rows);
  });

  test('a wrong type is refused, naming the row and the key', () => {
    refuses(() => readSource(file('players.json', JSON.stringify([STEVE, { ...STEVE, isAlex: 'yes' }])), 'json'), /players\.json: row 2: "isAlex" is the string "yes", not true or false/);
    refuses(() => readSource(file('players.json', JSON.stringify([{ name: 'Steve', hash: 42 }])), 'json'), /row 1: "hash" is the number 42, not a string/);
    refuses(() => readSource(file('players.json', JSON.stringify([{ name: 'Steve' }])), 'json'), /row 1: no "hash"/);
    refuses(() => readSource(file('players.json', JSON.stringify([STEVE, 'Alex'])), 'json'), /row 2 is the string "Alex", not an object/);
    refuses(() => readSource(file('players.json', JSON.stringify({ name: 'Steve' })), 'json'), /unknown key "name" beside "players"/);
  });

  test('an unknown key, a key given twice, and broken JSON are refused', () => {
    refuses(() => readSource(file('players.json', JSON.stringify([{ ...STEVE, password: 'x' }])), 'json'), /row 1: unknown key "password"/);
    refuses(() => readSource(file('players.json', '[{"name": "Steve", "hash": "x", "hash": "y"}]'), 'json'), /has the key "hash" twice/);
    refuses(() => readSource(file('players.json', '[{"name": "Steve",'), 'json'), /players\.json: not valid JSON/);
  });
});

// -- guessing ------------------------------------------------------------------------------------

describe('guessFormat', () => {
  test('picks each format from the file', () => {
    const cases: [string, SourceFormat][] = [
      [authmeDatabase(), 'authme'],
      [file('authme.csv', authmeCsv()), 'authme'],
      [file('authme.tsv', `id\tusername\trealname\tpassword\n1\tsteve\tSteve\t${SHA_HASH}\n`), 'authme'],
      [draslDatabase(), 'drasl'],
      [database('drasl-2.db', DRASL_V3_SCHEMA), 'drasl'],
      [file('players.csv', `\uFEFFname,hash\nSteve,${SHA_HASH}\n`), 'csv'],
      [file('players.tsv', `name\thash\nSteve\t${SHA_HASH}\n`), 'csv'],
      [file('players.json', '\n  [{"name": "Steve", "hash": "x"}]'), 'json'],
      [file('players.json', '\uFEFF{"players": []}'), 'json'],
    ];
    for (const [path, format] of cases) {
      assert.equal(guessFormat(path), format, path);
      readSource(path, format); // and each reads as what it was taken for
    }
  });

  test('a SQLite file that is neither AuthMe\'s nor drasl\'s is refused, naming its tables', () => {
    const path = database('other.db', 'CREATE TABLE accounts (id INTEGER PRIMARY KEY, login TEXT, pass TEXT)');
    refuses(() => guessFormat(path), /other\.db: a SQLite database, but neither AuthMe's \(a table "authme"\) nor drasl's .*its tables: accounts/);
    refuses(() => readSource(path, 'authme'), /other\.db: no table "authme", AuthMe's; its tables: accounts/);
  });

  test('a file that is neither SQLite nor text, an empty file, UTF-16 text, or a missing file, is refused', () => {
    refuses(() => guessFormat(file('image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]))), /image\.png: cannot tell its format.*pass --format authme, drasl, csv, json/);
    refuses(() => guessFormat(file('empty.csv', '')), /empty\.csv: the file is empty/);
    refuses(() => guessFormat(file('unicode.txt', Buffer.from('\uFEFFname\thash\n', 'utf16le'))), /unicode\.txt: UTF-16 text; save it as UTF-8/);
    refuses(() => guessFormat(join(dir, 'missing.csv')), /missing\.csv: cannot be read: ENOENT/);
    refuses(() => readSource(join(dir, 'missing.csv'), 'csv'), /missing\.csv: cannot be read: ENOENT/);
  });

  test('a file with the SQLite header but no database behind it is refused', () => {
    const path = file('broken.db', Buffer.concat([Buffer.from('SQLite format 3\0', 'latin1'), Buffer.alloc(84, 0xff)]));
    refuses(() => guessFormat(path), /broken\.db: cannot be opened as a SQLite database/);
  });
});
