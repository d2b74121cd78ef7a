// A small router: exact paths under an optional base path, one handler per method.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from './envelope.ts';

export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

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

/** Finds the handler for a request, or throws the 404 or 405 to answer instead. */
export function createRouter(basePath: string, routes: Routes): (req: IncomingMessage) => Handler {
  const table = new Map<string, Partial<Record<string, Handler>>>();
  for (const [path, methods] of Object.entries(routes)) table.set(normalizeBasePath(basePath) + path, methods);
  return (req) => {
    const methods = table.get(pathOf(req));
    if (!methods) throw new HttpError(404, 'Unknown endpoint');
    const method = req.method ?? '';
    const handler = Object.hasOwn(methods, method) ? methods[method] : undefined;
    if (!handler) {
      const allowed = Object.keys(methods).join(', ');
      throw new HttpError(405, `Method not allowed: use ${allowed}`, { allow: allowed });
    }
    return handler;
  };
}
