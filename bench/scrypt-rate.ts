// The raw scrypt rate: password hashes a second with the service's own function and parameters,
// `concurrency` at once, for `seconds`. The ceiling /auth is measured against.
//
//   node --import tsx bench/scrypt-rate.ts CONCURRENCY SECONDS
//
// Counted as the load generator counts /auth's logins: from an idle start, the hashes finished
// within the window, over the window. (Counting the last ones, begun inside it and finished after,
// over the time until they finish would set /auth against a rate it cannot reach: its window
// loses that last burst.)
import { hashPassword } from '../src/crypto/password.ts';

const concurrency = Number(process.argv[2] ?? 4);
const seconds = Number(process.argv[3] ?? 10);
await hashPassword('warm-up');
let done = 0;
const until = performance.now() + seconds * 1000;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) {
      await hashPassword('bench-password');
      if (performance.now() <= until) done++;
    }
  }),
);
process.stdout.write(`${done / seconds}\n`);
