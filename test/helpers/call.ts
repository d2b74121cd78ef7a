// One HTTP request from a chosen loopback address (all of 127/8 reaches a server on 127.0.0.1
// on Linux), for tests of the per-address and per-client rules.
import { request, type Agent } from 'node:http';

export interface Answer {
  status: number;
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

export interface CallOptions {
  from?: string;
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  agent?: Agent;
  timeoutMs?: number;
}

/** One request from the loopback address `from` (127.0.0.1 unless told), on a connection of its own unless an agent is given. */
export function call(port: number, path: string, { from = '127.0.0.1', method, body, headers = {}, agent, timeoutMs = 30_000 }: CallOptions = {}): Promise<Answer> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((done, fail) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: method ?? (payload ? 'POST' : 'GET'),
        localAddress: from,
        agent: agent ?? false,
        headers: { ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON (the metrics)
          }
          done({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
        });
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer to ${path} from ${from} within ${timeoutMs} ms`)));
    req.on('error', fail);
    req.end(payload);
  });
}
