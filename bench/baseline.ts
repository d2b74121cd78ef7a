// The baseline of the benchmark: the least an HTTP JSON service can do on this runtime. It reads
// the body, parses it as JSON and answers one fixed envelope; nothing else. What it reaches on a
// core is the ceiling the real server is measured against.
//
//   node bench/baseline.ts PORT
import { createServer } from 'node:http';

const ANSWER = JSON.stringify({ success: true, result: { userUUID: '00000000-0000-4000-8000-000000000000', skinUrl: null, capeUrl: null, isAlex: false } });

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let status = 200;
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      status = 400;
    }
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(ANSWER) });
    res.end(ANSWER);
  });
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`baseline listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
