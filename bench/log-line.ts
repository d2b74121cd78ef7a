// What a request's log line costs the server, measured alone: the logger called as the server
// calls it for each request (the same fields), its lines gathered into one write as the server's
// are, to standard output. Run it with standard output to a pipe, as under systemd:
//
//   node --import tsx bench/log-line.ts | cat > /dev/null
//
// It prints, on standard error, CPU µs a line (user + system) for each of 5 rounds of 200,000
// lines, A_TURN lines a turn of the event loop (a busy server answers a few requests a turn).
import { createLogger } from '../src/ops/log.ts';

const LINES = 200_000;
const A_TURN = Number(process.env.A_TURN ?? 3);
const log = createLogger('info', process.stdout, { buffered: true, format: 'json' });
let reqId = 0;

/** Logs `LINES` request lines, `A_TURN` a turn; resolves after the last turn's write. */
function round(): Promise<void> {
  return new Promise((done) => {
    let left = LINES;
    const turn = (): void => {
      for (let i = 0; i < A_TURN && left > 0; i++, left--) {
        log.info('request', { reqId: ++reqId, method: 'POST', path: '/hasJoined', status: 200, ms: 0.42, outcome: 'hit', reason: undefined, player: undefined, client: '127.0.0.1' });
      }
      setImmediate(left > 0 ? turn : done);
    };
    turn();
  });
}

for (let r = 1; r <= 5; r++) {
  const before = process.cpuUsage();
  await round();
  const used = process.cpuUsage(before);
  process.stderr.write(`round ${r}: ${((used.user + used.system) / LINES).toFixed(2)} µs a line\n`);
}
