// A small, strict parser of Prometheus' text exposition format (0.0.4), for tests that read
// /metrics: `# HELP` and `# TYPE` lines, samples `name{label="value",...} value [timestamp]` with
// label values escaped (\\, \", \n). Anything the format does not allow is an error naming the
// line, so a test that parses a scrape also checks that it is well formed.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

/** A metric family: its HELP and TYPE and its samples (a histogram's _bucket, _sum, _count too). */
export interface Family {
  name: string;
  type: MetricType | undefined;
  help: string | undefined;
  samples: Sample[];
}

export interface Exposition {
  /** By family name, in the order they appeared. */
  families: Map<string, Family>;
  /** Every sample, in order. */
  samples: Sample[];
}

/** Every family the server exposes, with its TYPE (as documented). */
export const METRIC_TYPES: Readonly<Record<string, MetricType>> = {
  http_requests_total: 'counter',
  http_request_duration_seconds: 'histogram',
  auth_logins_total: 'counter',
  auth_joins_total: 'counter',
  auth_has_joined_total: 'counter',
  auth_profiles_total: 'counter',
  auth_scrypt_queue_length: 'gauge',
  auth_scrypt_running: 'gauge',
  auth_refusals_total: 'counter',
  process_resident_memory_bytes: 'gauge',
  process_start_time_seconds: 'gauge',
  nodejs_eventloop_lag_seconds: 'gauge',
};

/** Every outcome each outcome counter reports (each from 0), in the order it reports them. */
export const OUTCOMES: Readonly<Record<string, string[]>> = {
  auth_logins_total: ['ok', 'bad_credentials', 'locked', 'throttled', 'busy', 'invalid', 'error'],
  auth_joins_total: ['ok', 'bad_token', 'invalid', 'error'],
  auth_has_joined_total: ['hit', 'miss', 'invalid', 'error'],
  auth_profiles_total: ['ok', 'partial', 'refused', 'error'],
};

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const FLOAT = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Inf|NaN)$/;
const TIMESTAMP = /^-?\d+$/;
const TYPES: readonly string[] = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

/** A float as the format writes it (Go's syntax: +Inf, -Inf, NaN too). */
export function parseFloatValue(text: string): number {
  if (!FLOAT.test(text)) throw new Error(`not a float: ${JSON.stringify(text)}`);
  if (/^[+]?Inf$/.test(text)) return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

/** The text of a HELP line: only \\ and \n are escapes there. */
function unescapeHelp(text: string): string {
  return text.replace(/\\(.)/g, (whole, c: string) => (c === 'n' ? '\n' : c === '\\' ? '\\' : whole));
}

/** Reads `{a="x",b="y"}` from `line` at `at` (on the `{`); returns the labels and where the text goes on. */
function readLabels(line: string, at: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = at + 1;
  const skipSpace = (): void => {
    while (line[i] === ' ' || line[i] === '\t') i++;
  };
  for (;;) {
    skipSpace();
    if (line[i] === '}') return { labels, end: i + 1 };
    const nameStart = i;
    while (i < line.length && /[a-zA-Z0-9_]/.test(line[i]!)) i++;
    const name = line.slice(nameStart, i);
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name at column ${nameStart + 1}`);
    if (Object.hasOwn(labels, name)) throw new Error(`label "${name}" given twice`);
    skipSpace();
    if (line[i] !== '=') throw new Error(`expected "=" after label "${name}"`);
    i++;
    skipSpace();
    if (line[i] !== '"') throw new Error(`expected a quoted value for label "${name}"`);
    i++;
    let value = '';
    for (;;) {
      if (i >= line.length) throw new Error(`unterminated value of label "${name}"`);
      const c = line[i]!;
      if (c === '"') break;
      if (c === '\\') {
        const next = line[i + 1];
        if (next === '\\') value += '\\';
        else if (next === '"') value += '"';
        else if (next === 'n') value += '\n';
        else throw new Error(`bad escape "\\${next ?? ''}" in label "${name}"`);
        i += 2;
      } else {
        value += c;
        i++;
      }
    }
    i++; // the closing quote
    labels[name] = value;
    skipSpace();
    if (line[i] === ',') i++;
    else if (line[i] !== '}') throw new Error(`expected "," or "}" after label "${name}"`);
  }
}

function parseSample(line: string): Sample {
  const nameEnd = line.search(/[{ \t]|$/);
  const name = line.slice(0, nameEnd);
  if (!METRIC_NAME.test(name)) throw new Error(`bad metric name ${JSON.stringify(name)}`);
  let rest = line.slice(nameEnd);
  let labels: Record<string, string> = {};
  const brace = rest.search(/\S/);
  if (brace !== -1 && rest[brace] === '{') {
    const read = readLabels(rest, brace);
    labels = read.labels;
    rest = rest.slice(read.end);
  }
  if (!/^[ \t]/.test(rest)) throw new Error('expected a space before the value');
  const fields = rest.trim().split(/[ \t]+/);
  if (fields.length < 1 || fields.length > 2 || fields[0] === '') throw new Error('expected a value and at most a timestamp');
  if (fields.length === 2 && !TIMESTAMP.test(fields[1]!)) throw new Error(`bad timestamp ${JSON.stringify(fields[1])}`);
  return { name, labels, value: parseFloatValue(fields[0]!) };
}

/** The family a sample name belongs to: its own, or a histogram's or summary's for the suffixed names. */
function familyOf(name: string, families: Map<string, Family>): string {
  if (families.has(name)) return name;
  for (const [suffix, types] of [
    ['_bucket', ['histogram']],
    ['_sum', ['histogram', 'summary']],
    ['_count', ['histogram', 'summary']],
  ] as const) {
    if (!name.endsWith(suffix)) continue;
    const base = families.get(name.slice(0, -suffix.length));
    if (base?.type !== undefined && (types as readonly string[]).includes(base.type)) return base.name;
  }
  return name;
}

const seriesKey = (s: Sample): string => `${s.name}${JSON.stringify(Object.entries(s.labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;

/**
 * Parses a whole exposition. Throws (naming the line) on a malformed line, a text that does not
 * end in a newline, a TYPE or HELP given twice or a TYPE after its family's samples, a family
 * whose samples are not together, or a series given twice.
 */
export function parseExposition(text: string): Exposition {
  if (text !== '' && !text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const families = new Map<string, Family>();
  const samples: Sample[] = [];
  const seen = new Set<string>();
  /** Families whose samples ended because another family's began. */
  const closed = new Set<string>();
  let current: string | undefined;
  const family = (name: string): Family => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, type: undefined, help: undefined, samples: [] }));
    return f;
  };
  const lines = text.split('\n');
  lines.pop(); // after the last newline
  lines.forEach((line, index) => {
    try {
      if (line.trim() === '') return;
      if (line.startsWith('#')) {
        const m = /^#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(line);
        if (!m) return; // a comment
        const keyword = m[1]!;
        const name = m[2]!;
        const rest = m[3] ?? '';
        if (!METRIC_NAME.test(name)) throw new Error(`bad metric name ${JSON.stringify(name)}`);
        const f = family(name);
        if (keyword === 'HELP') {
          if (f.help !== undefined) throw new Error(`a second HELP for ${name}`);
          f.help = unescapeHelp(rest);
        } else {
          if (f.type !== undefined) throw new Error(`a second TYPE for ${name}`);
          if (f.samples.length > 0) throw new Error(`TYPE of ${name} after its samples`);
          if (!TYPES.includes(rest.trim())) throw new Error(`unknown type ${JSON.stringify(rest)}`);
          f.type = rest.trim() as MetricType;
        }
        if (current !== name && current !== undefined) closed.add(current);
        current = name;
        return;
      }
      const sample = parseSample(line);
      const name = familyOf(sample.name, families);
      if (closed.has(name)) throw new Error(`samples of ${name} are not together`);
      if (current !== name && current !== undefined) closed.add(current);
      current = name;
      const key = seriesKey(sample);
      if (seen.has(key)) throw new Error(`series given twice: ${key}`);
      seen.add(key);
      family(name).samples.push(sample);
      samples.push(sample);
    } catch (err) {
      throw new Error(`line ${index + 1}: ${(err as Error).message}: ${JSON.stringify(line)}`);
    }
  });
  return { families, samples };
}

const matches = (s: Sample, labels: Record<string, string>): boolean =>
  Object.keys(s.labels).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => s.labels[k] === v);

/** The value of the one series with exactly these labels, or undefined when there is none. */
export function valueOf(e: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  return e.samples.find((s) => s.name === name && matches(s, labels))?.value;
}

/** valueOf, with a missing series counted as 0 (a counter not yet reported). */
export const countOf = (e: Exposition, name: string, labels: Record<string, string> = {}): number => valueOf(e, name, labels) ?? 0;

/** The samples named `name`, whatever their labels. */
export const samplesNamed = (e: Exposition, name: string): Sample[] => e.samples.filter((s) => s.name === name);

export interface HistogramSeries {
  /** The labels but `le`. */
  labels: Record<string, string>;
  /** Upper bounds ascending (the last is +Inf) with their cumulative counts. */
  buckets: { le: number; count: number }[];
  sum: number;
  count: number;
}

/**
 * A histogram family's series, checked against the format's rules: every series has buckets
 * with ascending `le` ending at +Inf, cumulative (never falling) counts, the +Inf bucket equal to
 * `_count`, and a `_sum`. Throws saying which rule a series breaks.
 */
export function histogram(e: Exposition, name: string): HistogramSeries[] {
  const family = e.families.get(name);
  if (family?.type !== 'histogram') throw new Error(`${name} is not declared a histogram`);
  const series = new Map<string, HistogramSeries>();
  const of = (labels: Record<string, string>): HistogramSeries => {
    const rest = Object.fromEntries(Object.entries(labels).filter(([k]) => k !== 'le'));
    const key = JSON.stringify(Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : 1)));
    let s = series.get(key);
    if (!s) series.set(key, (s = { labels: rest, buckets: [], sum: NaN, count: NaN }));
    return s;
  };
  for (const sample of family.samples) {
    if (sample.name === `${name}_bucket`) {
      const le = sample.labels.le;
      if (le === undefined) throw new Error(`${name}_bucket without le: ${JSON.stringify(sample.labels)}`);
      of(sample.labels).buckets.push({ le: parseFloatValue(le), count: sample.value });
    } else if (sample.name === `${name}_sum`) {
      if ('le' in sample.labels) throw new Error(`${name}_sum with an le label`);
      of(sample.labels).sum = sample.value;
    } else if (sample.name === `${name}_count`) {
      if ('le' in sample.labels) throw new Error(`${name}_count with an le label`);
      of(sample.labels).count = sample.value;
    } else {
      throw new Error(`${sample.name} in histogram ${name}`);
    }
  }
  for (const s of series.values()) {
    const where = `${name}${JSON.stringify(s.labels)}`;
    if (s.buckets.length === 0) throw new Error(`${where} has no buckets`);
    s.buckets.forEach((b, i) => {
      const prev = s.buckets[i - 1];
      if (prev && !(b.le > prev.le)) throw new Error(`${where}: le ${b.le} after ${prev.le}, not ascending`);
      if (prev && b.count < prev.count) throw new Error(`${where}: bucket le=${b.le} holds ${b.count} < ${prev.count}, not cumulative`);
    });
    const last = s.buckets.at(-1)!;
    if (last.le !== Infinity) throw new Error(`${where} has no +Inf bucket`);
    if (Number.isNaN(s.count)) throw new Error(`${where} has no _count`);
    if (Number.isNaN(s.sum)) throw new Error(`${where} has no _sum`);
    if (last.count !== s.count) throw new Error(`${where}: +Inf bucket ${last.count} != _count ${s.count}`);
  }
  return [...series.values()];
}
