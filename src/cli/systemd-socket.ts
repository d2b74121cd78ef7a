// systemd socket activation (sd_listen_fds(3)): systemd holds the listening socket (deploy/mcauth.socket)
// and hands it to the service as fd 3, with LISTEN_FDS (how many) and LISTEN_PID (the process
// they are for). Across `systemctl restart` the socket stays open in systemd, so a connection made
// while no server runs waits in the kernel's backlog for the next one instead of being refused.

/** The first fd systemd passes (SD_LISTEN_FDS_START). */
export const SYSTEMD_FIRST_FD = 3;

/**
 * The queue of connections not yet accepted, as deploy/mcauth.socket's Backlog= sets it: Node
 * listens on the passed socket again, with its own default (511) unless told this, and only as
 * `listen({ fd }, backlog)`: the `backlog` of the options object is ignored for an fd.
 */
export const SYSTEMD_SOCKET_BACKLOG = 1024;

/**
 * The fd of the listening socket systemd passed to process `pid`, or undefined when it passed
 * none. Variables inherited from a parent that was given them name another pid, and are ignored.
 * Only the first socket is used: the unit has one ListenStream=.
 */
export function systemdSocketFd(env: Record<string, string | undefined>, pid: number): number | undefined {
  let count: number;
  let forPid: string | undefined;
  try {
    count = Number(env.LISTEN_FDS);
    forPid = env.LISTEN_PID;
  } catch {
    // Deno run without --allow-env for these (its narrow recipe grants MCAUTH_* only): no socket is used.
    return undefined;
  }
  if (!Number.isInteger(count) || count < 1 || forPid !== String(pid)) return undefined;
  return SYSTEMD_FIRST_FD;
}
