// The time each test file of a phase took. The default export is a node:test reporter for
// test/run-files.ts: one JSON line for each test file as it ends (its path, its wall time from its
// process's start to its end, and whether it passed), and one with the run's test counts at the
// end. The rest is how run-files.ts and run-phases.ts report them.
import type { TestEvent } from 'node:test/reporters';

export interface FileTime {
  file: string;
  ms: number;
  passed: boolean;
}

export interface TestCounts {
  tests: number;
  passed: number;
  failed: number;
  skipped: number;
  todo: number;
  cancelled: number;
}

/** What test/run-files.ts reports of a phase. */
export interface PhaseReport {
  counts: TestCounts;
  /** Every file's time, the slowest first. */
  files: FileTime[];
}

/** How many of a phase's slowest files its report names. */
export const SLOWEST_SHOWN = 5;

/** A file's time as the reports print it. */
export const fileLine = (f: FileTime): string => `${(f.ms / 1000).toFixed(1).padStart(7)} s  ${f.file}${f.passed ? '' : '  (failed)'}`;

export default async function* fileTimes(events: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  for await (const event of events) {
    if (event.type === 'test:summary' && event.data.file === undefined) {
      // Node's types leave out `failed`, which its runner gives.
      const { tests, passed, failed, skipped, todo, cancelled } = event.data.counts as typeof event.data.counts & { failed: number };
      const counts: TestCounts = { tests, passed, failed, skipped, todo, cancelled };
      yield JSON.stringify({ counts }) + '\n';
    }
    // A file's own test (each file runs in a process of its own) is the one of nesting 0 that
    // names no entry file: the tests inside it name the file they came from as their entry file.
    if (event.type !== 'test:complete' || event.data.nesting !== 0 || event.data.file === undefined) continue;
    if ('entryFile' in event.data && event.data.entryFile !== undefined) continue;
    const time: FileTime = { file: event.data.file, ms: event.data.details.duration_ms, passed: event.data.details.passed };
    yield JSON.stringify(time) + '\n';
  }
}
