// The requests the benchmark and the profiler send: each endpoint's body about a random player,
// made ahead (making one a request would cost the load generator more than some requests cost
// the server).
import { nameOf, tokenOf, uuidOf } from './players.ts';
import { PASSWORD, SERVER_ID } from './seed.ts';

export interface Endpoint {
  path: string;
  label: string;
  /** A request body about player `pick()`; for GET, the path to ask for. */
  body: (pick: () => number) => unknown;
  method?: 'GET';
}

export const ENDPOINTS: Endpoint[] = [
  { path: '/hasJoined', label: '/hasJoined', body: (pick) => ({ username: nameOf(pick()), serverID: SERVER_ID }) },
  { path: '/profile', label: '/profile', body: (pick) => ({ userUUID: uuidOf(pick()) }) },
  { path: '/profiles', label: '/profiles (10 names)', body: (pick) => Array.from({ length: 10 }, () => nameOf(pick())) },
  {
    path: '/join',
    label: '/join',
    body: (pick) => {
      const i = pick();
      return { accessToken: tokenOf(i), userUUID: uuidOf(i), serverID: SERVER_ID };
    },
  },
  { path: '/auth', label: '/auth', body: (pick) => ({ login: nameOf(pick()), password: PASSWORD }) },
];

/** The Yggdrasil API's hasJoined (--yggdrasil): a GET, answered with the signed profile. */
export const YGGDRASIL_HAS_JOINED: Endpoint = {
  path: '/yggdrasil/sessionserver/session/minecraft/hasJoined',
  label: '/yggdrasil/.../hasJoined (signed)',
  method: 'GET',
  body: (pick) => `/yggdrasil/sessionserver/session/minecraft/hasJoined?username=${nameOf(pick())}&serverId=${SERVER_ID}`,
};

/** Random request bodies made ahead for each load. */
const BODIES = 10_000;

/** Bodies made ahead, of random players among `users`. */
export function bodiesOf(e: Endpoint, users: number): string[] {
  const pick = (): number => Math.floor(Math.random() * users);
  return Array.from({ length: BODIES }, () => (e.method === 'GET' ? String(e.body(pick)) : JSON.stringify(e.body(pick))));
}
