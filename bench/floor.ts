// The floor of the benchmark: the least a JSON POST API that answers about a player can do on
// node:http. It reads the body, parses it, finds the player in a Map by the body's one field,
// and answers the envelope mcauth answers with, made by JSON.stringify: /hasJoined and /profile
// less the checks, the database and the log line. Its players are the seeded ones (bench/players.ts),
// held in memory. What mcauth costs above it is what its checks, its store and its log cost.
//
//   node bench/floor.ts USERS [PORT]
import { createServer, type ServerResponse } from 'node:http';
import { nameOf, uuidOf } from './players.ts';

const users = Number(process.argv[2]);
if (!Number.isInteger(users) || users < 1) throw new Error('usage: node bench/floor.ts USERS [PORT]');

const byName = new Map<string, { userUUID: string }>();
const byUuid = new Map<string, { username: string }>();
for (let i = 0; i < users; i++) {
  byName.set(nameOf(i), { userUUID: uuidOf(i) });
  byUuid.set(uuidOf(i), { username: nameOf(i) });
}

/** Each path's one look-up, by the field of the body that mcauth's endpoint of that path reads. */
const LOOK_UPS: Record<string, (body: unknown) => object | undefined> = {
  '/hasJoined': (body) => byName.get((body as { username: string }).username),
  '/profile': (body) => byUuid.get((body as { userUUID: string }).userUUID),
};

function answer(res: ServerResponse, status: number, envelope: object): void {
  const text = JSON.stringify(envelope);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const lookUp = LOOK_UPS[req.url ?? ''];
    if (!lookUp) return answer(res, 404, { success: false, error: 'Not found' });
    let result: object | undefined;
    try {
      result = lookUp(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      return answer(res, 400, { success: false, error: 'Invalid body' });
    }
    if (!result) return answer(res, 404, { success: false, error: 'No such player' });
    answer(res, 200, { success: true, result });
  });
});
server.listen(Number(process.argv[3] ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`floor listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
