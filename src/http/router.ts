// A small router: paths under an optional base path, with `:name` segments as parameters, and
// one handler per method.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from './envelope.ts';

export type Params = Record<string, string>;
export type Handler = (req: IncomingMessage, res: ServerResponse, params: Params) => Promise<void>;
export type Routes = Record<string, Partial<Record<string, Handler>>>;

/** "/mc/", "mc" and "/mc" all mean "/mc"; "" and "/" mean no base path. */
export function normalizeBasePath(base: string): string {
  const trimmed = base.replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '' : `/${trimmed}`;
}

/** The path of a request, without its query string (which may carry a secret). */
export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** The query parameters of a request: what follows the path and its "?", if anything. */
export function queryOf(req: IncomingMessage): URLSearchParams {
  return new URLSearchParams((req.url ?? '/').slice(pathOf(req).length + 1));
}

/** The parameters of a path split at "/" when it matches a pattern's `segments`. */
function match(segments: string[], parts: string[]): Params | undefined {
  if (segments.length !== parts.length) return undefined;
  const params: Params = {};
  for (let i = 0; i < parts.length; i++) {
    const want = segments[i]!;
    if (want.startsWith(':')) {
      if (parts[i] === '') return undefined;
      params[want.slice(1)] = parts[i]!;
    } else if (want !== parts[i]) return undefined;
  }
  return params;
}

export interface Match {
  handler: Handler;
  params: Params;
  /** The route's pattern, as registered. */
  route: string;
}

/** Finds the handler (and its parameters) for a request's method and path, or gives the 404 or 405 to answer instead. */
export function createRouter(basePath: string, routes: Routes): (method: string, path: string) => Match | HttpError {
  // A route's pattern as registered, without the base path (`/textures/:hash`), and its segments with it.
  const base = normalizeBasePath(basePath);
  const table = Object.entries(routes).map(([pattern, methods]) => ({ pattern, segments: (base + pattern).split('/'), methods }));
  // A route without parameters is found in one look-up, and first: before any pattern that would take its path too.
  const exact = new Map(table.filter((r) => !r.pattern.includes('/:')).map((r) => [base + r.pattern, r]));
  return (method, path) => {
    let route = exact.get(path);
    let params: Params = {};
    const parts = route ? [] : path.split('/');
    for (let i = 0; route === undefined && i < table.length; i++) {
      const found = match(table[i]!.segments, parts);
      if (found) [route, params] = [table[i], found];
    }
    if (!route) return new HttpError(404, 'Unknown endpoint');
    // A HEAD is answered as the GET is, without the body (node:http leaves it out).
    const wanted = method === 'HEAD' && !Object.hasOwn(route.methods, 'HEAD') ? 'GET' : method;
    const handler = Object.hasOwn(route.methods, wanted) ? route.methods[wanted] : undefined;
    if (!handler) {
      const methods = Object.keys(route.methods);
      const allowed = (methods.includes('GET') && !methods.includes('HEAD') ? [...methods, 'HEAD'] : methods).join(', ');
      return new HttpError(405, `Method not allowed: use ${allowed}`, { allow: allowed });
    }
    return { handler, params, route: route.pattern };
  };
}
