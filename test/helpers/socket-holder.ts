// Plays systemd's part in socket activation, as a process of its own: it listens on 127.0.0.1,
// never accepts, and runs the server RUNS times in turn with that socket as fd 3 (LISTEN_FDS=1,
// LISTEN_PID the server's own pid), so connections made between two servers wait in the backlog.
// spawnSync blocks this process's event loop, the only place it could accept a connection; it
// reaches that loop once, before it says its port, when no one can connect yet.
//
//   node socket-holder.ts RUNS COMMAND...
//
// Writes one JSON line when it listens, {"holder":"listening","port":N}, and one after each
// server ends, {"holder":"exited","pid":N,"code":N,"signal":S}; the servers' output goes to the
// same standard output and error. Stop a server with a signal to its pid (in its log lines).
import { spawnSync } from 'node:child_process';
import { writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { SYSTEMD_SOCKET_BACKLOG } from '../../src/cli/systemd-socket.ts';

/** Longest a server may run: a test that died leaves no server behind for long. */
const RUN_LIMIT_MS = 10 * 60_000;

const [runs, ...command] = process.argv.slice(2);
const socket = createServer();
// With the unit's Backlog=, as systemd makes the socket: the server must not listen with less.
socket.listen({ port: 0, host: '127.0.0.1', backlog: SYSTEMD_SOCKET_BACKLOG }, () => {
  // The listening socket's fd: no public API gives it, and spawnSync takes only fds to pass on.
  const fd = (socket as unknown as { _handle: { fd: number } })._handle.fd;
  const { port } = socket.address() as { port: number };
  writeSync(1, `${JSON.stringify({ holder: 'listening', port })}\n`);
  for (let i = 0; i < Number(runs); i++) {
    // `exec` keeps sh's pid, so $$ is the server's own pid, as sd_listen_fds() checks.
    const r = spawnSync('sh', ['-c', 'LISTEN_PID=$$ exec "$@"', 'sh', ...command], {
      stdio: ['ignore', 'inherit', 'inherit', fd],
      env: { ...process.env, LISTEN_FDS: '1' },
      timeout: RUN_LIMIT_MS,
      killSignal: 'SIGKILL',
    });
    writeSync(1, `${JSON.stringify({ holder: 'exited', pid: r.pid, code: r.status, signal: r.signal })}\n`);
  }
  process.exit(0);
});
