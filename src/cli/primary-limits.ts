// --workers on one host's SQLite file: limits counted for the workers together, by their primary.
// A worker asks over node:cluster's channel and the primary counts in memory (src/ops/
// window-limit.ts), so every worker's calls count toward one total, as one process's would. On
// PostgreSQL the database counts them instead, for every node (src/postgres/window-limit.ts).
import type { Worker } from 'node:cluster';
import { createWindowLimit, type WindowLimit, type WindowLimits } from '../ops/window-limit.ts';
import { toPrimary } from './channel.ts';

/** A worker's question (a call of `key` under limit `name` at `now`, or one given back) and the primary's answer. */
type LimitMessage =
  | { mcauthLimit: 'take'; id: number; name: string; limit: number; windowMs: number; key: string; now: number; opensAt?: number }
  | { mcauthLimit: 'giveBack'; name: string; limit: number; windowMs: number; key: string }
  | { mcauthLimit: 'answer'; id: number; wait: number };

const isLimitMessage = (m: unknown): m is LimitMessage => typeof m === 'object' && m !== null && 'mcauthLimit' in m;

/** In the primary: answers its workers' limit messages (wired to every worker's 'message'). */
export function countForWorkers(): (worker: Worker, message: unknown) => void {
  // By name alone: workers of a reload with a new limit go on counting where the old ones were.
  const limits = new Map<string, WindowLimit>();
  const limitOf = ({ name, limit, windowMs }: { name: string; limit: number; windowMs: number }): WindowLimit => {
    const made = limits.get(name) ?? createWindowLimit(limit, windowMs);
    limits.set(name, made);
    return made;
  };
  return (worker, message) => {
    if (!isLimitMessage(message)) return;
    if (message.mcauthLimit === 'take') {
      const answer: LimitMessage = { mcauthLimit: 'answer', id: message.id, wait: limitOf(message).take(message.key, message.now, message.opensAt, message.limit) };
      worker.send(answer, undefined, {}, () => {});
    }
    if (message.mcauthLimit === 'giveBack') limitOf(message).giveBack(message.key);
  };
}

/** In a worker: limits its primary counts. Were the primary gone, a call is let through (the worker ends with it). */
export function primaryLimits(): WindowLimits {
  const waiting = new Map<number, (wait: number) => void>();
  let next = 0;
  process.on('message', (message: unknown) => {
    if (!isLimitMessage(message) || message.mcauthLimit !== 'answer') return;
    waiting.get(message.id)?.(message.wait);
    waiting.delete(message.id);
  });
  process.once('disconnect', () => {
    for (const answer of waiting.values()) answer(0);
    waiting.clear();
  });
  /** Sends `message`; `failed` runs when it could not be sent (the primary has gone). */
  const ask = (message: LimitMessage, failed = (): void => {}): void =>
    toPrimary(message, (err) => {
      if (err) failed();
    });
  return (name, limit, windowMs) => ({
    take: (key, now, opensAt) =>
      new Promise<number>((answer) => {
        const id = next++;
        waiting.set(id, answer);
        ask({ mcauthLimit: 'take', id, name, limit, windowMs, key, now, opensAt }, () => {
          waiting.delete(id);
          answer(0);
        });
      }),
    giveBack: (key) => ask({ mcauthLimit: 'giveBack', name, limit, windowMs, key }),
  });
}
