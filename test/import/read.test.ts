// The readers of `import SOURCE`: each format's rows from fixtures built here with the real
// schemas (AuthMe's SQLite.java), and the refusals of files that cannot be read as asked.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { type ImportRow, ImportSourceError, readSource } from '../../src/import/read/rows.ts';
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

/** AuthMe's table as SQLite.java's setup() leaves it with the default column names: CREATE, then each ALTER in its order. */
const AUTHME_SCHEMA = `
  CREATE TABLE IF NOT EXISTS authme (id INTEGER AUTO_INCREMENT, username VARCHAR(255) NOT NULL UNIQUE, CONSTRAINT table_const_prim PRIMARY KEY (id));
  ALTER TABLE authme ADD COLUMN realname VARCHAR(255) NOT NULL DEFAULT 'Player';
  ALTER TABLE authme ADD COLUMN password VARCHAR(255) NOT NULL DEFAULT '';
  ALTER TABLE authme ADD COLUMN ip VARCHAR(40);
  ALTER TABLE authme ADD COLUMN lastlogin TIMESTAMP;
  ALTER TABLE authme ADD COLUMN regip VARCHAR(40);
  ALTER TABLE authme ADD COLUMN regdate TIMESTAMP NOT NULL DEFAULT '0';
  ALTER TABLE authme ADD COLUMN x DOUBLE NOT NULL DEFAULT '0.0';
  ALTER TABLE authme ADD COLUMN y DOUBLE NOT NULL DEFAULT '0.0';
  ALTER TABLE authme ADD COLUMN z DOUBLE NOT NULL DEFAULT '0.0';
  ALTER TABLE authme ADD COLUMN world VARCHAR(255) NOT NULL DEFAULT 'world';
  ALTER TABLE authme ADD COLUMN yaw FLOAT;
  ALTER TABLE authme ADD COLUMN pitch FLOAT;
  ALTER TABLE authme ADD COLUMN email VARCHAR(255);
  ALTER TABLE authme ADD COLUMN isLogged INT NOT NULL DEFAULT '0';
  ALTER TABLE authme ADD COLUMN hasSession INT NOT NULL DEFAULT '0';
  ALTER TABLE authme ADD COLUMN totp VARCHAR(32);
  ALTER TABLE authme ADD COLUMN premiumUUID VARCHAR(36)`;

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
    refuses(() => readSource(file('players.csv', 'name,hash\nSt"eve,x\n'), 'csv'), /line 2, field 1: a quote inside the unquoted field "St\\"eve"/);
    refuses(() => readSource(file('players.csv', 'name,hash\nSteve,x,y\n'), 'csv'), /line 2 has 3 fields, the header has 2/);
  });

  test('isAlex other than true, false, 1, 0 or empty is refused', () => {
    refuses(() => readSource(file('players.csv', 'name,hash,isAlex\nSteve,x,yes\n'), 'csv'), /line 2: isAlex is "yes"/);
  });

  test('a file that is not UTF-8 is refused, not decoded to replacement characters', () => {
    refuses(() => readSource(file('latin1.csv', Buffer.from('name,hash\nJos\xe9,x\n', 'latin1')), 'csv'), /latin1\.csv: not UTF-8 text/);
  });

  test('a SQLite file asked for as csv is refused', () => {
    refuses(() => readSource(authmeDatabase(), 'csv'), /a SQLite database, not csv text; try --format authme/);
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

