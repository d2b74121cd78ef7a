// `npm run release [FOLDER]`: the files an owner downloads, into release/ (or FOLDER):
//   mcauth-<version>.js               the bundle `npm run build` makes (dist/server.js), for a Node of the host's or Deno
//   mcauth-<version>-<os>-<arch>      a single executable application: the pinned Node with that bundle inside
//   DEPLOY_FILES                      the files of deploy/ a host takes, as they are: systemd's
//                                     units (the service, its socket, the daily backup and its
//                                     timer), config.example.json and nginx.conf
//   SHA256SUMS                        the digests of all of them, as `sha256sum -c` reads them
// The bundle is built with package.json's own build command (only its output file changed and
// no source map), so the release cannot drift from what every test runs. The executable is made
// by the Node pinned in devDependencies (`node --build-sea`), whichever Node runs this script: a
// single executable application carries the Node that built it.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { BUNDLE_ASSET } from '../src/sea.ts';

const ROOT = resolve(import.meta.dirname, '..');
/** The Node that builds (and is) the executable: the one pinned in devDependencies. */
export const PINNED_NODE = join(ROOT, 'node_modules', 'node', 'bin', 'node');

/** The files of deploy/ the release carries as they are, for a host that has no clone: docs/deployment.md installs them. */
export const DEPLOY_FILES = ['mcauth.service', 'mcauth.socket', 'mcauth-backup.service', 'mcauth-backup.timer', 'config.example.json', 'nginx.conf'];

export interface Release {
  version: string;
  dir: string;
  /** mcauth-<version>.js */
  script: string;
  /** mcauth-<version>-<os>-<arch> */
  executable: string;
  /** SHA256SUMS */
  sums: string;
}

const run = (command: string, args: string[], cwd = ROOT): void => {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${basename(command)} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stdout}${r.stderr}`);
};

/** package.json's build command's esbuild arguments, writing `outfile` instead, without a source map. */
function buildArgs(outfile: string): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { build: string } };
  const [tool, ...args] = pkg.scripts.build.split(/\s+/);
  if (tool !== 'esbuild' || !args.includes('--outfile=dist/server.js')) throw new Error(`the build script is no longer "esbuild ... --outfile=dist/server.js": ${pkg.scripts.build}`);
  return args.filter((a) => a !== '--sourcemap').map((a) => (a.startsWith('--outfile=') ? `--outfile=${outfile}` : a));
}

/** What the pinned Node says of itself: its version and where it runs. */
function pinnedNode(): { version: string; target: string } {
  const r = spawnSync(PINNED_NODE, ['-p', 'JSON.stringify([process.version, process.platform, process.arch])'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the pinned Node (${PINNED_NODE}) does not run; npm ci installs it: ${r.error?.message ?? r.stderr}`);
  const [version, platform, arch] = JSON.parse(r.stdout) as string[];
  return { version: version!, target: `${platform}-${arch}` };
}

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Builds the release into `dir` (made if missing; files of the same names are replaced). */
export function buildRelease(dir = join(ROOT, 'release')): Release {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const { target } = pinnedNode();
  mkdirSync(dir, { recursive: true });
  const script = join(dir, `mcauth-${version}.js`);
  const executable = join(dir, `mcauth-${version}-${target}`);
  run(join(ROOT, 'node_modules', '.bin', 'esbuild'), buildArgs(script));

  const work = mkdtempSync(join(tmpdir(), 'mcauth-release-'));
  try {
    const config = join(work, 'sea-config.json');
    writeFileSync(
      config,
      JSON.stringify({
        // By its name, from the release's folder: the executable keeps this path, and the same
        // bytes must come of a build in any folder.
        main: basename(script),
        // The bundle is an ES module (top-level await); Node 25.5 and later run one as the main script.
        mainFormat: 'module',
        output: executable,
        disableExperimentalSEAWarning: true,
        // No useCodeCache: it would start the executable 6 ms sooner (38 ms instead of 44 for
        // --version), but V8's cache differs from build to build, and without it the same
        // source and pinned Node make the same bytes, so anyone can check SHA256SUMS by building
        // the release again. (useSnapshot cannot take an ES module.)
        // The bundle once more, for the hash worker threads to start (src/sea.ts).
        assets: { [BUNDLE_ASSET]: script },
      }),
    );
    run(PINNED_NODE, ['--build-sea', config], dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  chmodSync(executable, 0o755);
  chmodSync(script, 0o644);

  for (const name of DEPLOY_FILES) {
    copyFileSync(join(ROOT, 'deploy', name), join(dir, name));
    chmodSync(join(dir, name), 0o644);
  }
  const deployed = DEPLOY_FILES.map((name) => join(dir, name));

  const sums = join(dir, 'SHA256SUMS');
  writeFileSync(sums, [executable, script, ...deployed].map((f) => `${sha256(f)}  ${basename(f)}\n`).join(''));
  return { version, dir, script, executable, sums };
}

if (import.meta.main) {
  const started = performance.now();
  const release = buildRelease(process.argv[2] === undefined ? undefined : resolve(process.argv[2]));
  const took = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(`mcauth ${release.version} released into ${release.dir} in ${took} s:\n${readFileSync(release.sums, 'utf8')}`);
}
