// What /metrics reports: request counts and durations, what became of logins, joins and
// hasJoined checks, and the process's health, in Prometheus' text exposition format (0.0.4),
// under the names the usual Node dashboards know.
import type { Area } from '../http/app.ts';

/** One answered request, as the HTTP layer saw it. */
export interface RequestRecord {
  /** The route's pattern (`/textures/:hash`), never the raw path: label values stay few. */
  route: string;
  status: number;
  seconds: number;
  /** What became of a login, join or hasJoined check. */
  outcome?: string;
  /** Why a refusal answered in-band (see IN_BAND in src/http/app.ts), a partial answer was given, or which per-client rule refused (REFUSAL_REASONS). */
  reason?: string;
}

/**
 * The reasons auth_refusals_total counts (reported from 0), each a rule that refuses one client
 * to keep room for the others: address_budget (--address-login-limit), address_connections
 * (--max-connections-per-address), connections (--max-connections), throttle (failed logins of a
 * name, from this client or past the name's ceiling), pool_share (the address holding the most of
 * a full hash pool), pool_busy (a full hash pool, or a name's line of logins), signature_budget
 * (the Yggdrasil API's new profile signatures of one address).
 */
const REFUSAL_REASONS = ['address_budget', 'address_connections', 'connections', 'throttle', 'pool_share', 'pool_busy', 'signature_budget'];

/** Upper bounds of the duration histogram, in seconds: fine below 10 ms, where most answers fall. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The counter each endpoint's outcomes go to, with every outcome it can have (reported from 0). */
const OUTCOME_COUNTERS: Record<string, { name: string; help: string; outcomes: string[] }> = {
  '/auth': { name: 'auth_logins_total', help: 'Logins, by outcome.', outcomes: ['ok', 'bad_credentials', 'locked', 'throttled', 'busy', 'invalid', 'error'] },
  '/join': { name: 'auth_joins_total', help: 'Joins of a game server, by outcome (every one but ok answered with result false).', outcomes: ['ok', 'bad_token', 'invalid', 'error'] },
  '/hasJoined': { name: 'auth_has_joined_total', help: 'hasJoined checks of game servers: hit or miss.', outcomes: ['hit', 'miss', 'invalid', 'error'] },
  '/profiles': { name: 'auth_profiles_total', help: 'Bulk name look-ups: ok, partial (entries not looked up), refused or error (answered with an empty list).', outcomes: ['ok', 'partial', 'refused', 'error'] },
};

/** A label value as the format wants it: backslash, quote and newline escaped. */
const label = (value: string): string => value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');

/** Seconds to the microsecond: float sums would otherwise print as 0.0009140599999998358. */
const micros = (seconds: number): number => Math.round(seconds * 1e6) / 1e6;

const header = (name: string, type: string, help: string): string => `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n`;

/** Time from now until the event loop runs a task queued now. */
function eventLoopLag(): Promise<number> {
  const start = performance.now();
  return new Promise((done) => setImmediate(() => done((performance.now() - start) / 1000)));
}

export interface Gauges {
  /** Password hashes running and waiting for a slot. */
  hashLoad: () => { running: number; waiting: number };
}

export type Metrics = ReturnType<typeof createMetrics>;

export function createMetrics(gauges: Gauges) {
  const requests = new Map<string, Map<number, number>>(); // route -> status -> count
  const durations = new Map<string, { buckets: number[]; sum: number; count: number }>(); // by route
  const outcomes = new Map(Object.values(OUTCOME_COUNTERS).map((c) => [c.name, new Map(c.outcomes.map((o) => [o, 0]))]));
  const refusals = new Map(REFUSAL_REASONS.map((r) => [r, 0]));

  return {
    observe(r: RequestRecord): void {
      let byStatus = requests.get(r.route);
      if (!byStatus) requests.set(r.route, (byStatus = new Map()));
      byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
      let d = durations.get(r.route);
      if (!d) durations.set(r.route, (d = { buckets: DURATION_BUCKETS.map(() => 0), sum: 0, count: 0 }));
      const at = DURATION_BUCKETS.findIndex((le) => r.seconds <= le);
      if (at !== -1) d.buckets[at]!++;
      d.sum += r.seconds;
      d.count++;
      const counter = OUTCOME_COUNTERS[r.route];
      const byOutcome = counter && outcomes.get(counter.name);
      if (byOutcome && r.outcome !== undefined && byOutcome.has(r.outcome)) byOutcome.set(r.outcome, byOutcome.get(r.outcome)! + 1);
      if (r.reason !== undefined && refusals.has(r.reason)) refusals.set(r.reason, refusals.get(r.reason)! + 1);
    },

    async render(): Promise<string> {
      const lag = await eventLoopLag();
      let text = header('http_requests_total', 'counter', 'Requests answered, by route and status.');
      for (const [route, byStatus] of requests) {
        for (const [status, n] of byStatus) text += `http_requests_total{route="${label(route)}",status="${status}"} ${n}\n`;
      }
      text += header('http_request_duration_seconds', 'histogram', 'Time from a request to its answer, by route.');
      for (const [route, d] of durations) {
        const r = label(route);
        let cumulative = 0;
        DURATION_BUCKETS.forEach((le, i) => {
          cumulative += d.buckets[i]!;
          text += `http_request_duration_seconds_bucket{route="${r}",le="${le}"} ${cumulative}\n`;
        });
        text += `http_request_duration_seconds_bucket{route="${r}",le="+Inf"} ${d.count}\n`;
        text += `http_request_duration_seconds_sum{route="${r}"} ${micros(d.sum)}\n`;
        text += `http_request_duration_seconds_count{route="${r}"} ${d.count}\n`;
      }
      for (const { name, help } of Object.values(OUTCOME_COUNTERS)) {
        text += header(name, 'counter', help);
        for (const [outcome, n] of outcomes.get(name)!) text += `${name}{outcome="${outcome}"} ${n}\n`;
      }
      text += header('auth_refusals_total', 'counter', 'Requests a per-client rule refused, by reason (address_budget, address_connections, connections, throttle, pool_share, pool_busy, signature_budget).');
      for (const [reason, n] of refusals) text += `auth_refusals_total{reason="${reason}"} ${n}\n`;
      const { running, waiting } = gauges.hashLoad();
      text += header('auth_scrypt_queue_length', 'gauge', 'Logins waiting for a password-hash slot.') + `auth_scrypt_queue_length ${waiting}\n`;
      text += header('auth_scrypt_running', 'gauge', 'Password hashes being computed.') + `auth_scrypt_running ${running}\n`;
      text += header('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.') + `process_resident_memory_bytes ${process.memoryUsage().rss}\n`;
      text += header('process_start_time_seconds', 'gauge', 'Start time of the process since the epoch, in seconds.') + `process_start_time_seconds ${Math.round(performance.timeOrigin) / 1000}\n`;
      text += header('nodejs_eventloop_lag_seconds', 'gauge', 'Lag of the event loop in seconds, measured at this scrape.') + `nodejs_eventloop_lag_seconds ${micros(lag)}\n`;
      return text;
    },
  };
}

/** GET {base}/metrics as an area of the app, behind the API key as the rest: Prometheus' text format. */
export function metricsArea(render: () => Promise<string>): Area {
  return {
    prefix: '/metrics/',
    routes: {
      '/metrics': {
        GET: async (_req, res) => {
          const text = await render();
          res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
          res.end(text);
        },
      },
    },
  };
}
