// The metrics in process: createMetrics renders Prometheus' text format (0.0.4) that a strict
// parser reads back (every family with HELP and TYPE); observe() moves the counters of its route
// and status and the outcome counter of /auth, /join or /hasJoined (every outcome reported from
// 0, an unknown one ignored); the duration histogram's buckets are cumulative with +Inf equal to
// the count; label values have backslash, quote and newline escaped. The parser is checked too,
// so a malformed text cannot pass as valid.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createMetrics, type RequestRecord } from '../../src/ops/metrics.ts';
import { countOf, histogram, METRIC_TYPES, OUTCOMES, parseExposition, samplesNamed, valueOf, type Exposition } from '../helpers/prometheus.ts';

/** Fresh metrics whose hash gauges report what the test sets. */
function fresh(load = { running: 0, waiting: 0 }) {
  const metrics = createMetrics({ hashLoad: () => load });
  const scrape = async (): Promise<Exposition> => parseExposition(await metrics.render());
  const observe = (r: Partial<RequestRecord> & { route: string }): void => metrics.observe({ status: 200, seconds: 0.001, ...r });
  return { metrics, scrape, observe, load };
}

/** Every outcome counter's values, by counter and outcome. */
function outcomeCounts(e: Exposition): Record<string, Record<string, number>> {
  return Object.fromEntries(Object.keys(OUTCOMES).map((name) => [name, Object.fromEntries(samplesNamed(e, name).map((s) => [s.labels.outcome, s.value]))]));
}

const zeros = (): Record<string, Record<string, number>> =>
  Object.fromEntries(Object.entries(OUTCOMES).map(([name, outcomes]) => [name, Object.fromEntries(outcomes.map((o) => [o, 0]))]));

describe('the test parser of the text format', () => {
  test('reads HELP, TYPE, labels with escapes, a trailing comma, special floats and a timestamp', () => {
    const e = parseExposition(
      [
        '# HELP a_total Help with \\\\ and \\n in it.',
        '# TYPE a_total counter',
        'a_total{x="q\\"b\\\\s\\nn",y="",} 3 1700000000000',
        '# a comment',
        '# TYPE g gauge',
        'g +Inf',
        'g{k="v"} -1.5e-3',
        'g{k="w"} NaN',
        '',
      ].join('\n'),
    );
    assert.equal(e.families.get('a_total')?.help, 'Help with \\ and \n in it.');
    assert.equal(e.families.get('a_total')?.type, 'counter');
    assert.deepEqual(e.samples[0], { name: 'a_total', labels: { x: 'q"b\\s\nn', y: '' }, value: 3 });
    assert.equal(valueOf(e, 'g'), Infinity);
    assert.equal(valueOf(e, 'g', { k: 'v' }), -0.0015);
    assert.ok(Number.isNaN(valueOf(e, 'g', { k: 'w' })));
    assert.equal(valueOf(e, 'g', { k: 'nope' }), undefined);
  });

  test('refuses what the format does not allow', () => {
    const bad: [string, RegExp][] = [
      ['a{x="unescaped " quote"} 1\n', /line 1/],
      ['a{x="raw\nnewline"} 1\n', /unterminated/],
      ['a{x="bad \\t escape"} 1\n', /bad escape/],
      ['a{x="1",x="2"} 1\n', /twice/],
      ['a{x=1} 1\n', /quoted value/],
      ['a 1', /end with a newline/],
      ['a one\n', /not a float/],
      ['a\n', /space before the value/],
      ['a 1 2 3\n', /at most a timestamp/],
      ['1a 1\n', /bad metric name/],
      ['a 1\n# TYPE a counter\n', /after its samples/],
      ['# TYPE a counter\n# TYPE a gauge\n', /second TYPE/],
      ['# TYPE a widget\n', /unknown type/],
      ['a 1\nb 1\na{x="y"} 1\n', /not together/],
      ['a{x="1"} 1\na{x="1"} 2\n', /given twice/],
    ];
    for (const [text, error] of bad) assert.throws(() => parseExposition(text), error, JSON.stringify(text));
  });

  test('checks a histogram: ascending le, cumulative counts, +Inf equal to _count, a _sum', () => {
    const h = (lines: string[]) => parseExposition(['# TYPE h histogram', ...lines, ''].join('\n'));
    const good = h(['h_bucket{le="1"} 1', 'h_bucket{le="2"} 3', 'h_bucket{le="+Inf"} 3', 'h_sum 2.5', 'h_count 3']);
    assert.deepEqual(histogram(good, 'h'), [{ labels: {}, buckets: [{ le: 1, count: 1 }, { le: 2, count: 3 }, { le: Infinity, count: 3 }], sum: 2.5, count: 3 }]);
    assert.throws(() => histogram(h(['h_bucket{le="1"} 2', 'h_bucket{le="2"} 1', 'h_bucket{le="+Inf"} 2', 'h_sum 1', 'h_count 2']), 'h'), /not cumulative/);
    assert.throws(() => histogram(h(['h_bucket{le="2"} 1', 'h_bucket{le="1"} 1', 'h_bucket{le="+Inf"} 1', 'h_sum 1', 'h_count 1']), 'h'), /not ascending/);
    assert.throws(() => histogram(h(['h_bucket{le="1"} 1', 'h_bucket{le="+Inf"} 1', 'h_sum 1', 'h_count 2']), 'h'), /!= _count/);
    assert.throws(() => histogram(h(['h_bucket{le="1"} 1', 'h_sum 1', 'h_count 1']), 'h'), /no \+Inf/);
    assert.throws(() => histogram(h(['h_bucket{le="+Inf"} 1', 'h_count 1']), 'h'), /no _sum/);
  });
});

describe('createMetrics', () => {
  test('renders valid text: every family declared once with HELP and TYPE, and nothing else', async () => {
    const { metrics, observe } = fresh();
    observe({ route: '/auth', outcome: 'ok' });
    const text = await metrics.render();
    const e = parseExposition(text);
    for (const [name, type] of Object.entries(METRIC_TYPES)) {
      const family = e.families.get(name);
      assert.equal(family?.type, type, `TYPE of ${name}`);
      assert.ok(family.help !== undefined && family.help.length > 0, `HELP of ${name}`);
    }
    assert.deepEqual([...e.families.keys()].sort(), Object.keys(METRIC_TYPES).sort(), 'no family but the documented ones');
    assert.doesNotMatch(text, /\r/);
  });

  test('before any request: every outcome of each counter is reported at 0, and no request series', async () => {
    const e = await fresh().scrape();
    assert.deepEqual(outcomeCounts(e), zeros());
    assert.deepEqual(samplesNamed(e, 'http_requests_total'), []);
    assert.deepEqual(e.families.get('http_request_duration_seconds')?.samples, []);
  });

  test('observe() moves the request counter of its route and status, and the outcome of its endpoint', async () => {
    const { scrape, observe } = fresh();
    observe({ route: '/auth', status: 200, outcome: 'ok' });
    observe({ route: '/auth', status: 200, outcome: 'ok' });
    observe({ route: '/auth', status: 401, outcome: 'bad_credentials' });
    observe({ route: '/auth', status: 429, outcome: 'throttled' });
    observe({ route: '/auth', status: 503, outcome: 'busy' });
    observe({ route: '/join', status: 200, outcome: 'bad_token' });
    observe({ route: '/hasJoined', status: 404, outcome: 'miss' });
    observe({ route: '/hasJoined', status: 200, outcome: 'hit' });
    observe({ route: '/profiles', status: 200 });
    observe({ route: 'unmatched', status: 404 });
    const e = await scrape();
    const requests = (route: string, status: string) => valueOf(e, 'http_requests_total', { route, status });
    assert.equal(requests('/auth', '200'), 2);
    assert.equal(requests('/auth', '401'), 1);
    assert.equal(requests('/auth', '429'), 1);
    assert.equal(requests('/auth', '503'), 1);
    assert.equal(requests('/join', '200'), 1);
    assert.equal(requests('/hasJoined', '404'), 1);
    assert.equal(requests('/hasJoined', '200'), 1);
    assert.equal(requests('/profiles', '200'), 1);
    assert.equal(requests('unmatched', '404'), 1);
    assert.equal(samplesNamed(e, 'http_requests_total').length, 9, 'one series a route and status');
    const expected = zeros();
    Object.assign(expected.auth_logins_total!, { ok: 2, bad_credentials: 1, throttled: 1, busy: 1 });
    Object.assign(expected.auth_joins_total!, { bad_token: 1 });
    Object.assign(expected.auth_has_joined_total!, { hit: 1, miss: 1 });
    assert.deepEqual(outcomeCounts(e), expected);
  });

  test('counters only go up, scrape after scrape', async () => {
    const { scrape, observe } = fresh();
    let before = await scrape();
    for (let round = 1; round <= 3; round++) {
      observe({ route: '/join', outcome: 'ok' });
      const now = await scrape();
      assert.equal(countOf(now, 'http_requests_total', { route: '/join', status: '200' }), round);
      assert.equal(countOf(now, 'auth_joins_total', { outcome: 'ok' }) - countOf(before, 'auth_joins_total', { outcome: 'ok' }), 1);
      before = now;
    }
  });

  test('unknown outcomes are ignored: no new label, no count moved', async () => {
    const { scrape, observe } = fresh();
    observe({ route: '/auth', status: 200, outcome: 'bogus' });
    observe({ route: '/auth', status: 200, outcome: 'hit' }); // hasJoined's, not a login's
    observe({ route: '/join', status: 200, outcome: 'miss' });
    observe({ route: '/hasJoined', status: 200, outcome: 'ok' });
    observe({ route: '/profile', status: 200, outcome: 'ok' }); // a route without outcomes
    observe({ route: '/auth', status: 500 }); // no outcome at all
    const e = await scrape();
    assert.deepEqual(outcomeCounts(e), zeros());
    assert.equal(valueOf(e, 'http_requests_total', { route: '/auth', status: '200' }), 2, 'the requests themselves still count');
  });

  test('the duration histogram: buckets cumulative, le inclusive, +Inf equal to the count, sum in seconds', async () => {
    const { scrape, observe } = fresh();
    for (const seconds of [0.0003, 0.001, 0.003, 0.3, 20]) observe({ route: '/auth', seconds });
    observe({ route: '/join', seconds: 0.002 });
    const e = await scrape();
    const series = histogram(e, 'http_request_duration_seconds'); // throws on any rule broken
    assert.deepEqual(series.map((s) => s.labels).sort((a, b) => (a.route! < b.route! ? -1 : 1)), [{ route: '/auth' }, { route: '/join' }]);
    const auth = series.find((s) => s.labels.route === '/auth')!;
    const at = (le: number) => auth.buckets.find((b) => b.le === le)?.count;
    assert.deepEqual([at(0.0005), at(0.001), at(0.0025), at(0.005), at(0.25), at(0.5), at(10), at(Infinity)], [1, 2, 2, 3, 3, 4, 4, 5]);
    assert.equal(auth.buckets[0]!.le, 0.0005, 'buckets start at 0.5 ms');
    assert.equal(auth.buckets.at(-2)!.le, 10, 'and end at 10 s before +Inf');
    assert.equal(auth.count, 5);
    assert.equal(auth.sum, 20.3043);
    const join = series.find((s) => s.labels.route === '/join')!;
    assert.deepEqual([join.count, join.sum, join.buckets.at(-1)!.count], [1, 0.002, 1]);
  });

  test('the sum is printed to the microsecond, not as a float\'s long tail', async () => {
    const { metrics, observe } = fresh();
    observe({ route: '/x', seconds: 0.1 });
    observe({ route: '/x', seconds: 0.2 });
    assert.match(await metrics.render(), /^http_request_duration_seconds_sum\{route="\/x"\} 0\.3$/m);
  });

  test('label values have backslash, quote and newline escaped, and read back as they were', async () => {
    const { metrics, observe } = fresh();
    const odd = 'a"b\\c\nd';
    observe({ route: odd, status: 200 });
    const text = await metrics.render();
    const e = parseExposition(text); // an unescaped quote or newline would not parse
    assert.ok(text.includes('route="a\\"b\\\\c\\nd",le="0.0005"'), text);
    assert.equal(histogram(e, 'http_request_duration_seconds')[0]!.labels.route, odd);
  });

  /** Observes one request on route `odd`; its counter line must write the label as `written` and read back as `odd`. */
  const assertRouteLabelKept = async (odd: string, written: string): Promise<void> => {
    const { metrics, observe } = fresh();
    observe({ route: odd, status: 200 });
    const text = await metrics.render();
    assert.ok(text.includes(`http_requests_total{route="${written}",status="200"} 1`), text);
    assert.equal(valueOf(parseExposition(text), 'http_requests_total', { route: odd, status: '200' }), 1);
  };

  // Routes are the router's fixed patterns today; a label must stay whole whatever it holds.
  test('http_requests_total keeps a route label with a quote, backslash and newline whole', async () => {
    await assertRouteLabelKept('a"b\\c\nd', 'a\\"b\\\\c\\nd');
  });

  test('a quote or backslash in a route label of http_requests_total is escaped', async () => {
    await assertRouteLabelKept('a"b\\c', 'a\\"b\\\\c');
  });

  test('the gauges: hash load as reported at the scrape, memory, start time, event-loop lag', async () => {
    const load = { running: 2, waiting: 7 };
    const startedAround = Date.now() / 1000;
    const { scrape } = fresh(load);
    let e = await scrape();
    assert.equal(valueOf(e, 'auth_scrypt_running'), 2);
    assert.equal(valueOf(e, 'auth_scrypt_queue_length'), 7);
    load.running = 0;
    load.waiting = 1;
    e = await scrape();
    assert.deepEqual([valueOf(e, 'auth_scrypt_running'), valueOf(e, 'auth_scrypt_queue_length')], [0, 1], 'read at each scrape');
    assert.ok(valueOf(e, 'process_resident_memory_bytes')! > 1024 * 1024, 'some memory is resident');
    const start = valueOf(e, 'process_start_time_seconds')!;
    assert.ok(Math.abs(start - startedAround) < 60, `start time ${start} is in seconds since the epoch, near ${startedAround}`);
    const lag = valueOf(e, 'nodejs_eventloop_lag_seconds')!;
    assert.ok(lag >= 0 && lag < 10, `lag ${lag} is in seconds`);
  });
});
