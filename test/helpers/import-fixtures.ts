// The real schemas of the systems `import` reads, for fixtures built by tests: AuthMe's SQLite
// table and drasl's database.

/** AuthMe's table as SQLite.java's setup() leaves it with the default column names: CREATE, then each ALTER in its order. */
export const AUTHME_SCHEMA = `
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

/** drasl's tables as GORM's AutoMigrate makes them for its current models (model.go, schema version 6). */
export const DRASL_SCHEMA = `
  PRAGMA user_version = 6;
  CREATE TABLE \`users\` (\`is_admin\` numeric,\`is_locked\` numeric,\`uuid\` text,\`username\` text NOT NULL,\`password_salt\` blob,\`password_hash\` blob,\`browser_token\` text,\`minecraft_token\` text,\`api_token\` text,\`preferred_language\` text,\`max_player_count\` integer,PRIMARY KEY (\`uuid\`),CONSTRAINT \`uni_users_username\` UNIQUE (\`username\`));
  CREATE TABLE \`players\` (\`uuid\` text,\`name\` text collate nocase NOT NULL,\`offline_uuid\` text NOT NULL,\`created_at\` datetime,\`name_last_changed_at\` datetime,\`skin_hash\` text,\`skin_model\` text,\`cape_hash\` text,\`server_id\` text,\`fallback_player\` text,\`user_uuid\` text NOT NULL,PRIMARY KEY (\`uuid\`),CONSTRAINT \`fk_users_players\` FOREIGN KEY (\`user_uuid\`) REFERENCES \`users\`(\`uuid\`),CONSTRAINT \`uni_players_name\` UNIQUE (\`name\`));
  CREATE TABLE \`clients\` (\`uuid\` text,\`client_token\` text,\`version\` integer,\`user_uuid\` text NOT NULL,\`player_uuid\` text,\`last_used_at\` datetime,\`auth_method\` integer,PRIMARY KEY (\`uuid\`),CONSTRAINT \`fk_players_clients\` FOREIGN KEY (\`player_uuid\`) REFERENCES \`players\`(\`uuid\`) ON DELETE CASCADE,CONSTRAINT \`fk_users_clients\` FOREIGN KEY (\`user_uuid\`) REFERENCES \`users\`(\`uuid\`));
  CREATE TABLE \`invites\` (\`code\` text,\`created_at\` datetime,PRIMARY KEY (\`code\`));
  CREATE TABLE \`user_oidc_identities\` (\`id\` integer PRIMARY KEY AUTOINCREMENT,\`user_uuid\` text NOT NULL,\`subject\` text NOT NULL,\`issuer\` text NOT NULL,CONSTRAINT \`fk_users_o_id_c_identities\` FOREIGN KEY (\`user_uuid\`) REFERENCES \`users\`(\`uuid\`));
  CREATE INDEX \`idx_users_browser_token\` ON \`users\`(\`browser_token\`);
  CREATE INDEX \`idx_players_cape_hash\` ON \`players\`(\`cape_hash\`);
  CREATE INDEX \`idx_players_skin_hash\` ON \`players\`(\`skin_hash\`);
  CREATE INDEX \`idx_clients_player_uuid\` ON \`clients\`(\`player_uuid\`);
  CREATE UNIQUE INDEX \`subject_issuer_unique_index\` ON \`user_oidc_identities\`(\`subject\`,\`issuer\`);
  CREATE INDEX \`idx_user_oidc_identities_user_uuid\` ON \`user_oidc_identities\`(\`user_uuid\`)`;
