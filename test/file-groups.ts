// Which test files run together and which alone (test/run-files.ts).

/**
 * Test files run at once. Most wait on timers, on the servers and commands they start and on
 * PostgreSQL far more than on a core, and Node's runner would run them one at a time on a 2-core
 * machine (availableParallelism() - 1). At this many, both cores of such a machine stay busy
 * (1.9 of 2, measured over the Node phase's group): more would only crowd them.
 */
export const FILES_AT_ONCE = 6;

/**
 * Files that time what the server does under a load they make themselves (a flood of logins, of
 * connections or of reset guesses, a database going away under requests), that must land requests
 * inside a throttle's window, or that hold a failed login to its floor: they run after the rest,
 * one at a time, so that no other file's work moves what they measure. Tests of the same rules that
 * only wait (a throttle window, a TTL) live in other files, which run with the rest.
 */
export const TIMING_FILES = [
  'test/e2e/flood.test.ts',
  'test/e2e/connection-flood.test.ts',
  'test/e2e/reset-flood.test.ts',
  'test/e2e/overload.test.ts',
  'test/e2e/postgres-outage.test.ts',
  'test/e2e/throttle.test.ts',
  'test/service/throttle.test.ts',
];
