// The comparator of the benchmark: the popular stack, fastify 5 with JSON-schema validation of the
// body and a schema-compiled answer, over node:sqlite, one prepared statement a request. It
// serves /hasJoined and /profile from the seeded database in the envelope mcauth answers with.
//
//   node bench/fastify.ts DB [PORT]
import Fastify from 'fastify';
import { DatabaseSync } from 'node:sqlite';

const db = new DatabaseSync(process.argv[2]!);
db.exec('PRAGMA busy_timeout = 5000');
const JOIN_TTL_MS = 86_400_000;

const hasJoined = db.prepare(
  `SELECT users.id, users.skin_url, users.cape_url, users.is_alex FROM users JOIN joins ON joins.user_id = users.id
   WHERE users.name_key = ? AND joins.server_id = ? AND joins.joined_at > ?`,
);
const profile = db.prepare('SELECT name, skin_url, cape_url, is_alex FROM users WHERE id = ?');

interface Row {
  id?: string;
  name?: string;
  skin_url: string | null;
  cape_url: string | null;
  is_alex: number;
}

const textures = (row: Row) => ({
  ...(row.skin_url === null ? {} : { isAlex: row.is_alex === 1, skinUrl: row.skin_url }),
  ...(row.cape_url === null ? {} : { capeUrl: row.cape_url }),
});

const envelope = (result: Record<string, unknown>) => ({
  type: 'object',
  properties: { success: { type: 'boolean' }, result: { type: 'object', properties: result }, error: { type: 'string' } },
});
const textureProperties = { isAlex: { type: 'boolean' }, skinUrl: { type: 'string' }, capeUrl: { type: 'string' } };
const answers = (result: Record<string, unknown>) => ({ 200: envelope(result), 404: envelope({}) });

const app = Fastify();
app.post<{ Body: { username: string; serverID: string } }>(
  '/hasJoined',
  {
    schema: {
      body: {
        type: 'object',
        required: ['username', 'serverID'],
        additionalProperties: false,
        properties: { username: { type: 'string', pattern: '^[A-Za-z0-9_]{3,16}$' }, serverID: { type: 'string', minLength: 1, maxLength: 64 } },
      },
      response: answers({ userUUID: { type: 'string' }, ...textureProperties }),
    },
  },
  async (req, reply) => {
    const row = hasJoined.get(req.body.username.toLowerCase(), req.body.serverID, Date.now() - JOIN_TTL_MS) as Row | undefined;
    if (!row) return reply.code(404).send({ success: false, error: 'Player has not joined this server' });
    return { success: true, result: { userUUID: row.id, ...textures(row) } };
  },
);
app.post<{ Body: { userUUID: string } }>(
  '/profile',
  {
    schema: {
      body: {
        type: 'object',
        required: ['userUUID'],
        additionalProperties: false,
        properties: { userUUID: { type: 'string', pattern: '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$' } },
      },
      response: answers({ username: { type: 'string' }, ...textureProperties }),
    },
  },
  async (req, reply) => {
    const row = profile.get(req.body.userUUID.toLowerCase()) as Row | undefined;
    if (!row) return reply.code(404).send({ success: false, error: 'No player with this UUID' });
    return { success: true, result: { username: row.name, ...textures(row) } };
  },
);

const address = await app.listen({ port: Number(process.argv[3] ?? 0), host: '127.0.0.1' });
process.stdout.write(`fastify listening on ${address}\n`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
