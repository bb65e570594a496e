import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InterruptedError } from '../../src/core/errors.js';
import { DEFAULT_SIM_TOKEN } from '../../src/sim/config.js';
import { type GwResult, isolatedDirs, runBash, runGw } from '../helpers/gw.js';
import { startGwServer } from '../helpers/gw-server.js';
import { tempDir } from '../helpers/tmp.js';
import { useSim } from '../helpers/sim.js';

const TASKS = '/beta/api/v3/contents/generations/tasks';
const OTHER = 'sk-other-1111';
type Sim = Awaited<ReturnType<typeof useSim>>;

/** Runs a bash script whose `gw` runs in-process (gw-server.ts): real shell semantics, no Node start per line. */
async function bash(script: string, env: Record<string, string>): Promise<GwResult> {
  const server = await startGwServer();
  try {
    const r = await runBash(`${server.prelude}\n${script}`, { env });
    expect(server.stackTraces).toEqual([]);
    return r;
  } finally {
    await server.close();
  }
}

async function twoTenants(timings: Record<string, number> = {}): Promise<Sim> {
  return useSim({
    tokens: {
      [DEFAULT_SIM_TOKEN]: { tenant: 'default', models: '*' },
      [OTHER]: { tenant: 't2', models: '*' },
    },
    timings,
  });
}

/** Creates a task straight over HTTP (setup for tests about other commands). */
async function createTask(sim: Sim, text: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await fetch(sim.baseUrl + TASKS, {
    method: 'POST',
    headers: { authorization: `Bearer ${DEFAULT_SIM_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gamma-video-2-0', content: [{ type: 'text', text }], ...extra }),
  });
  return ((await res.json()) as { id: string }).id;
}

async function statusOf(sim: Sim, id: string): Promise<string> {
  const res = await fetch(`${sim.baseUrl}${TASKS}/${id}`, {
    headers: { authorization: `Bearer ${DEFAULT_SIM_TOKEN}` },
  });
  return ((await res.json()) as { status: string }).status;
}

async function until(check: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition never held');
}

describe('gw beta task: the scripted workflow', () => {
  it('create → wait → download → list → delete in a bash script', async () => {
    const sim = await useSim();
    const work = tempDir('gw-beta-work-');
    const dirs = isolatedDirs();
    const r = await bash(
      `set -euo pipefail
id=$(gw beta task create "a red kite over dunes" -m gamma-video-2-0-fast --resolution 720p --duration 5 --return-last-frame)
[[ "$id" == cgt-* ]]
gw beta task wait "$id" --timeout 1m 2> "$WORK/wait.txt"
grep -Eq "^$id succeeded$" "$WORK/wait.txt"
paths=$(gw beta task download "$id" -o "$WORK/kite.mp4" --last-frame "$WORK/kite.png")
[[ "$paths" == "$WORK/kite.mp4"$'\\n'"$WORK/kite.png" ]]
[[ -s "$WORK/kite.mp4" && -s "$WORK/kite.png" ]]
gw beta task list --json | grep -q "\\"id\\": \\"$id\\""
gw beta task list | grep -q "$id"
gw beta task delete "$id" 2> "$WORK/delete.txt"
grep -q 'hidden from this tenant' "$WORK/delete.txt"
if gw beta task get "$id" 2> "$WORK/get.txt"; then echo "still visible"; exit 1; fi
grep -q 'task_not_found' "$WORK/get.txt"
echo "done $id"`,
      { ...sim.env, ...dirs, WORK: work },
    );
    // stderr: nothing (the reminder that the result URL lives about 24 hours is a tip: terminals only)
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const id = /^done (cgt-\S+)$/m.exec(r.stdout)?.[1] as string;
    expect(id).toBeDefined();
    expect(readFileSync(join(work, 'kite.mp4')).subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(readFileSync(join(work, 'kite.png')).subarray(1, 4).toString('latin1')).toBe('PNG');
    // the journal got the id before it was printed, and kept the last state
    const journal = readFileSync(join(dirs.GW_STATE_DIR, 'journal.jsonl'), 'utf8');
    expect(journal).toContain(`"kind":"beta-task","id":"${id}"`);
    expect(journal.trim().split('\n').pop()).toContain('"state":"deleted"');
    const create = sim.requests.find((q) => q.method === 'POST' && q.path === TASKS);
    expect(create?.body).toEqual({
      model: 'gamma-video-2-0-fast',
      content: [{ type: 'text', text: 'a red kite over dunes' }],
      duration: 5,
      resolution: '720p',
      return_last_frame: true,
    });
    expect(sim.sim.cdn.authorizationSeen).toEqual([]); // the token never went to the CDN
  });

  it('create --download chains: the id first, then the file', async () => {
    const sim = await useSim();
    const work = tempDir('gw-beta-work-');
    const file = join(work, 'clip.mp4');
    const r = await runGw(
      ['beta', 'task', 'create', 'waves', '-m', 'gamma-video-2-0-mini', '--download', file],
      { env: sim.env },
    );
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^cgt-\S+\n$/);
    expect(r.stderr).not.toMatch(/about 24 hours/); // a tip: only on a terminal
    expect(readFileSync(file).subarray(4, 8).toString('latin1')).toBe('ftyp');
    const json = await runGw(
      ['beta', 'task', 'create', 'waves', '-m', 'gamma-video-2-0-mini', '--wait', '--json'],
      { env: sim.env },
    );
    expect(JSON.parse(json.stdout)).toMatchObject({
      id: expect.stringMatching(/^cgt-/) as unknown,
      task: { status: 'succeeded' },
    });
  });

  it('--dry-run shows the body, the SKU and its price, and sends nothing', async () => {
    const sim = await useSim();
    const r = await runGw(
      [
        'beta',
        'task',
        'create',
        'edit it',
        '-m',
        'gamma-video-2-0-filter-off',
        '--ref-video',
        'Asset://asset-1',
        '--resolution',
        '1080p',
        '--dry-run',
      ],
      { env: sim.env },
    );
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('"url": "asset://asset-1"');
    expect(r.stdout).toContain('price: not known in advance: billed by output tokens');
    expect(r.stderr).toContain('sku: gamma-video-2-0-1080p-video');
    expect(r.stderr).toContain('price: 4.7 USD per million tokens');
    const k = await runGw(
      [
        'beta',
        'task',
        'create',
        'x',
        '-m',
        'gamma-video-2-0',
        '--resolution',
        '4k',
        '--ratio',
        '4:3',
        '--dry-run',
        '--json',
      ],
      {
        env: { GW_BASE_URL: '', GW_TOKEN: '' }, // needs no gateway
      },
    );
    expect(JSON.parse(k.stdout)).toMatchObject({
      price: { beta: { sku: { sku: 'gamma-video-2-0-4k-novideo', price: 4 }, size: '3326x2494' } },
    });
    expect(sim.requests).toEqual([]);
  });
});

describe('gw beta task: list, delete, wait outcomes', () => {
  it('list --all walks every page', async () => {
    const sim = await useSim();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await createTask(sim, `t${i}`));
    sim.requests.length = 0;
    const r = await runGw(['beta', 'task', 'list', '--all', '--page-size', '3', '--json'], {
      env: sim.env,
    });
    expect(r.exitCode).toBe(0);
    const doc = JSON.parse(r.stdout) as { items: Array<{ id: string }>; total: number };
    expect(doc.total).toBe(7);
    expect(doc.items.map((i) => i.id).sort()).toEqual([...ids].sort());
    expect(sim.requests.map((q) => q.query)).toEqual([
      '?page_num=1&page_size=3',
      '?page_num=2&page_size=3',
      '?page_num=3&page_size=3',
    ]);
    const table = await runGw(
      ['beta', 'task', 'list', '--page-size', '2', '--ids', `${ids[0]},${ids[1]}`, '--ids', ids[2] as string],
      { env: sim.env },
    );
    expect(table.stdout.match(/cgt-/g)).toHaveLength(2);
    expect(sim.requests.at(-1)?.query).toContain(`filter.task_ids=${ids[0]}%2C${ids[1]}%2C${ids[2]}`);
  });

  it('an account that has not opened the family: 503 service_unavailable with the request id and the hint', async () => {
    const sim = await useSim({
      tokens: { 'sk-closed-2222': { tenant: 'c', models: '*', notOpened: ['beta-tasks', 'asset-library'] } },
    });
    const env = { ...sim.env, GW_TOKEN: 'sk-closed-2222' };
    const t = await runGw(['beta', 'task', 'create', 'a kite', '-m', 'gamma-video-2-0'], { env });
    expect(t.exitCode).toBe(1);
    expect(t.stdout).toBe('');
    expect(t.stderr).toMatch(
      /error: service_unavailable: this account has not opened the overseas video family/,
    );
    expect(t.stderr).toMatch(/request id: req-sim-/);
    expect(t.stderr).toContain('hint: the account has not opened the overseas family or the asset library');
    const g = await runGw(['beta', 'asset', 'group', 'create', '--name', 'refs', '-m', 'gamma-video-2-0'], {
      env,
    });
    expect(g.exitCode).toBe(1);
    expect(g.stderr).toMatch(/error: service_unavailable: this account has not opened the asset library/);
    expect(g.stderr).toContain('hint: the account has not opened the overseas family or the asset library');
  });

  it('delete: running → 409 explained; queued → cancelled; cancelled → refused', async () => {
    const sim = await useSim();
    const running = await createTask(sim, 'forever [sim:never]');
    await until(async () => (await statusOf(sim, running)) === 'running');
    const r = await runGw(['beta', 'task', 'delete', running], { env: sim.env });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /error: InvalidAction.RunningTaskDeletion: task cgt-\S+ is running, and the interface does not delete running tasks/,
    );
    expect(r.stderr).toMatch(/request id: req-sim-/);
    expect(r.stderr).toContain(`hint: wait until it ends (gw beta task wait ${running})`);

    const slow = await useSim({ timings: { betaQueuedMs: 600_000 } });
    const queued = await createTask(slow, 'later');
    const q = await runGw(['beta', 'task', 'delete', queued], { env: slow.env });
    expect(q.exitCode).toBe(0);
    expect(q.stderr).toContain(`task ${queued} was queued: it is now cancelled`);
    expect(await statusOf(slow, queued)).toBe('cancelled');
    const again = await runGw(['beta', 'task', 'delete', queued, '--json'], { env: slow.env });
    expect(again.exitCode).toBe(1);
    expect(JSON.parse(again.stderr)).toMatchObject({ error: { type: 'Conflict' } });
  });

  it('wait: failed and expired exit 1, timeout exits 4 with the resume command, Ctrl-C exits 130', async () => {
    const sim = await useSim();
    const failed = await createTask(sim, 'x [sim:fail]');
    const f = await runGw(['beta', 'task', 'wait', failed], { env: sim.env });
    expect(f.exitCode).toBe(1);
    expect(f.stderr).toMatch(/error: task_failed: task cgt-\S+ ended failed/);
    expect(f.stdout).toBe('');
    expect(f.stderr).toMatch(/^cgt-\S+ failed$/m);
    const expired = await createTask(sim, 'x [sim:expire]');
    const e = await runGw(['beta', 'task', 'wait', expired, '--json'], { env: sim.env });
    expect(e.exitCode).toBe(1);
    expect(JSON.parse(e.stdout)).toMatchObject({ id: expired, status: 'expired' });

    const never = await createTask(sim, 'x [sim:never]');
    const t = await runGw(['beta', 'task', 'wait', never, '--timeout', '1s'], { env: sim.env });
    expect(t.exitCode).toBe(4);
    expect(t.stderr).toContain(`resume with: gw beta task wait ${never}`);

    const polled = (): boolean =>
      sim.requests.some((q) => q.method === 'GET' && q.path === `${TASKS}/${never}`);
    sim.requests.length = 0;
    // Ctrl-C as main() sees it (the real signal is covered by the spawned tests of video wait and signals-pty).
    const ctrlC = new AbortController();
    void until(polled).then(() => ctrlC.abort(new InterruptedError()));
    const c = await runGw(['beta', 'task', 'wait', never], { env: sim.env, signal: ctrlC.signal });
    expect(c.exitCode).toBe(130);
    expect(c.stderr).toContain(`resume with: gw beta task wait ${never}`);
  });

  it('a second token (another tenant) gets task_not_found and an empty list', async () => {
    const sim = await twoTenants();
    const id = await createTask(sim, 'mine');
    const env = { ...sim.env, GW_TOKEN: OTHER };
    for (const argv of [
      ['beta', 'task', 'get', id],
      ['beta', 'task', 'delete', id],
      ['beta', 'task', 'wait', id],
      ['beta', 'task', 'download', id, '-o', join(tempDir('gw-'), 'x.mp4')],
    ]) {
      const r = await runGw(argv, { env });
      expect(r.exitCode, argv.join(' ')).toBe(1);
      expect(r.stderr).toMatch(/^error: task_not_found: /m);
      expect(r.stderr).toContain('hint: the task does not exist or belongs to another tenant');
    }
    const list = await runGw(['beta', 'task', 'list', '--json'], { env });
    expect(JSON.parse(list.stdout)).toEqual({ items: [], total: 0 });
    expect(await statusOf(sim, id)).not.toBe('cancelled'); // untouched
  });

  it('--no-validate sends a rule-breaking body and the simulator answers with the documented code', async () => {
    const sim = await useSim({ betaFilterOffUnmapped: true });
    const d = await runGw(
      ['--no-validate', 'beta', 'task', 'create', 'x', '-m', 'gamma-video-2-0', '--duration', '3'],
      { env: sim.env },
    );
    expect(d.exitCode).toBe(1);
    expect(d.stderr).toMatch(/^error: invalid_duration: /m);
    const m = await runGw(['beta', 'task', 'create', 'x', '-m', 'gamma-video-2-0-filter-off'], {
      env: sim.env,
    });
    expect(m.exitCode).toBe(1);
    expect(m.stderr).toMatch(/^error: model_mapping_required: /m);
    expect(m.stderr).toContain('hint: the filter-off model lacks an exact upstream version mapping');
  });
});

describe('gw beta task: every client-side rule exits 2 and sends nothing', () => {
  const work = tempDir('gw-beta-rules-');
  const file = (name: string, text: string): string => {
    const p = join(work, name);
    writeFileSync(p, text);
    return p;
  };
  const existing = file('exists.mp4', 'x');
  const C = ['beta', 'task', 'create'];
  const cases: Array<[string, string[], RegExp]> = [
    ['an alias', [...C, 'x', '-m', 'gv2'], /model: "gv2" is not accepted/],
    [
      'a suffixed filter-off name',
      [...C, 'x', '-m', 'gamma-video-2-0-filter-off-260128'],
      /no version suffix/,
    ],
    ['a short id', [...C, 'x', '-m', 'gamma-video-2'], /short ids and aliases are refused/],
    ['no model', [...C, 'x'], /model: model is required/],
    ['no prompt and no reference', [...C, '-m', 'gamma-video-2-0'], /content: content is required/],
    ['an empty prompt', [...C, ' ', '-m', 'gamma-video-2-0'], /at least a prompt text or a reference asset/],
    [
      'duration 3',
      [...C, 'x', '-m', 'gamma-video-2-0', '--duration', '3'],
      /^error: invalid_duration: --duration: must be an integer from 4 to 15, or -1/m,
    ],
    ['duration 16', [...C, 'x', '-m', 'gamma-video-2-0', '--duration', '16'], /invalid_duration/],
    ['duration 4.5', [...C, 'x', '-m', 'gamma-video-2-0', '--duration', '4.5'], /invalid_duration/],
    ['duration -2', [...C, 'x', '-m', 'gamma-video-2-0', '--duration', '-2'], /invalid_duration/],
    [
      'ratio 2:1',
      [...C, 'x', '-m', 'gamma-video-2-0', '--ratio', '2:1'],
      /ratio: must be one of adaptive, 16:9/,
    ],
    [
      'resolution 8k',
      [...C, 'x', '-m', 'gamma-video-2-0', '--resolution', '8k'],
      /resolution: must be one of 480p, 720p, 1080p, 4k/,
    ],
    [
      '4k on fast',
      [...C, 'x', '-m', 'gamma-video-2-0-fast', '--resolution', '4k'],
      /4k is offered only on gamma-video-2-0/,
    ],
    [
      '4k on fast-filter-off',
      [...C, 'x', '-m', 'gamma-video-2-0-fast-filter-off', '--resolution', '4k'],
      /4k is offered only/,
    ],
    [
      '4k on mini (dated)',
      [...C, 'x', '-m', 'gamma-video-2-0-mini-260615', '--resolution', '4k'],
      /4k is offered only/,
    ],
    [
      '1080p on mini',
      [...C, 'x', '-m', 'gamma-video-2-0-mini', '--resolution', '1080p'],
      /offers only 480p and 720p/,
    ],
    [
      '1080p on fast',
      [...C, 'x', '-m', 'gamma-video-2-0-fast', '--resolution', '1080p'],
      /offers only 480p and 720p/,
    ],
    [
      'audio reference on mini',
      [...C, 'x', '-m', 'gamma-video-2-0-mini', '--ref-audio', 'asset-a'],
      /content\[1\]\.type: gamma-video-2-0-mini takes no audio_url/,
    ],
    [
      'references.audio on mini',
      [
        ...C,
        'x',
        '-m',
        'gamma-video-2-0-mini',
        '--body',
        file('ra.json', '{"references":{"audio":["asset://a"]}}'),
      ],
      /references\.audio: gamma-video-2-0-mini takes no audio references/,
    ],
    [
      'flex on mini',
      [...C, 'x', '-m', 'gamma-video-2-0-mini', '--service-tier', 'flex'],
      /--service-tier: flex is rejected/,
    ],
    ['draft on mini', [...C, 'x', '-m', 'gamma-video-2-0-mini', '--draft'], /draft: draft=true is rejected/],
    [
      'priority 10',
      [...C, 'x', '-m', 'gamma-video-2-0', '--priority', '10'],
      /priority: must be an integer from 0 to 9/,
    ],
    ['priority -1', [...C, 'x', '-m', 'gamma-video-2-0', '--priority', '-1'], /priority/],
    [
      'expiry not an integer',
      [...C, 'x', '-m', 'gamma-video-2-0', '--execution-expires-after', '1h'],
      /--execution-expires-after: must be a positive integer/,
    ],
    [
      '4 reference videos',
      [
        ...C,
        'x',
        '-m',
        'gamma-video-2-0',
        '--ref-video',
        'a',
        '--ref-video',
        'b',
        '--ref-video',
        'c',
        '--ref-video',
        'd',
      ],
      /at most 3 reference videos/,
    ],
    [
      'a media URL that is not an asset',
      [...C, 'x', '-m', 'gamma-video-2-0', '--ref-image', 'https://example.com/a.png'],
      /asset:\/\/<Asset_Id>/,
    ],
    [
      'a blank callback_url',
      [...C, 'x', '-m', 'gamma-video-2-0', '--callback-url', '  '],
      /--callback-url: must not be empty after trimming/,
    ],
    [
      'an http callback_url',
      [...C, 'x', '-m', 'gamma-video-2-0', '--callback-url', 'http://93.184.216.34/cb'],
      /must use https/,
    ],
    [
      'a loopback callback_url',
      [...C, 'x', '-m', 'gamma-video-2-0', '--callback-url', 'https://127.0.0.1/cb'],
      /loopback/,
    ],
    [
      'a localhost callback_url',
      [...C, 'x', '-m', 'gamma-video-2-0', '--callback-url', 'https://localhost:8443/cb'],
      /loopback name/,
    ],
    [
      'a private callback_url',
      [...C, 'x', '-m', 'gamma-video-2-0', '--callback-url', 'https://192.168.0.10/cb'],
      /private/,
    ],
    [
      'a link-local callback_url',
      [...C, 'x', '-m', 'gamma-video-2-0', '--callback-url', 'https://169.254.169.254/cb'],
      /link-local/,
    ],
    [
      'a multicast callback_url',
      [...C, 'x', '-m', 'gamma-video-2-0', '--callback-url', 'https://239.1.1.1/cb'],
      /multicast/,
    ],
    [
      'a CGNAT callback_url',
      [...C, 'x', '-m', 'gamma-video-2-0', '--callback-url', 'https://100.100.1.1/cb'],
      /carrier-grade NAT/,
    ],
    [
      'an IPv6 loopback callback_url',
      [...C, 'x', '-m', 'gamma-video-2-0', '--callback-url', 'https://[::1]/cb'],
      /loopback/,
    ],
    [
      'CallbackURL in the body',
      [...C, 'x', '-m', 'gamma-video-2-0', '--body', file('cb.json', '{"CallbackURL":"https://10.1.1.1/x"}')],
      /callback_url: 10\.1\.1\.1 is a private address/,
    ],
    [
      'a body that is not JSON',
      [...C, 'x', '-m', 'gamma-video-2-0', '--body', file('bad.json', '{')],
      /^error: invalid_input: --body: ".*bad\.json" is not valid JSON/m,
    ],
    [
      'a body that is an array',
      [...C, 'x', '-m', 'gamma-video-2-0', '--body', file('arr.json', '[]')],
      /must hold a JSON object/,
    ],
    [
      '--download onto an existing file',
      [...C, 'x', '-m', 'gamma-video-2-0', '--download', existing],
      /already exists; choose another file name/,
    ],
    [
      'list --status done',
      ['beta', 'task', 'list', '--status', 'done'],
      /status: must be one of queued, running/,
    ],
    ['list --model alias', ['beta', 'task', 'list', '--model', 'gv2'], /model: "gv2" is not accepted/],
    ['list --page 0', ['beta', 'task', 'list', '--page', '0'], /page: must be an integer >= 1/],
    [
      'list --page-size x',
      ['beta', 'task', 'list', '--page-size', 'x'],
      /page-size: must be an integer >= 1/,
    ],
    [
      'download onto an existing file',
      ['beta', 'task', 'download', 'cgt-1', '-o', existing],
      /already exists/,
    ],
    [
      'wait with a bad --timeout',
      ['beta', 'task', 'wait', 'cgt-1', '--timeout', 'soon'],
      /timeout: "soon" is not a duration/,
    ],
  ];

  it.each(cases)('%s', async (_name, argv, message) => {
    const sim = await useSim();
    const r = await runGw(argv, { env: sim.env });
    expect(r.stderr).toMatch(message);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(sim.requests).toEqual([]);
  });

  it('accepts the same values at the edges (and warns about an unusual expiry)', async () => {
    const sim = await useSim();
    const r = await runGw(
      [
        ...C,
        'x',
        '-m',
        'gamma-video-2-0-260128',
        '--duration',
        '-1',
        '--priority',
        '9',
        '--resolution',
        '4k',
        '--ratio',
        '21:9',
        '--ref-video',
        'a',
        '--ref-video',
        'b',
        '--ref-video',
        'c',
        '--callback-url',
        'https://93.184.216.34/cb',
        '--execution-expires-after',
        '60',
        '--dry-run',
      ],
      { env: sim.env },
    );
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(
      /warning: execution_expires_after=60 is outside the usual upstream range 3600 to 259200/,
    );
    expect(sim.requests).toEqual([]);
  });
});
