import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM_TOKEN } from '../../src/sim/config.js';
import { assetStore } from '../../src/sim/routes/beta-assets.js';
import { isolatedDirs, runGw } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';

const OTHER = 'sk-other-1111';
const M = ['-m', 'gamma-video-2-0'];
type Sim = Awaited<ReturnType<typeof useSim>>;

const actions = (sim: Sim): string[] =>
  sim.requests
    .filter((q) => q.path === '/beta/')
    .map((q) => new URLSearchParams(q.query).get('Action') ?? '');

async function group(sim: Sim, env: Record<string, string> = sim.env): Promise<string> {
  const r = await runGw(
    ['beta', 'asset', 'group', 'create', '--name', 'refs', '--description', 'storyboard', ...M],
    { env },
  );
  expect(r.exitCode).toBe(0);
  return r.stdout.trim();
}

describe('gw beta asset: to Active and to Failed', () => {
  it('group create → asset create --wait → Active, usable as asset:// in a task', async () => {
    const sim = await useSim();
    const dirs = isolatedDirs();
    const env = { ...sim.env, ...dirs };
    const g = await group(sim, env);
    expect(g).toMatch(/^group-\d{14}-\w+$/);
    const a = await runGw(
      [
        'beta',
        'asset',
        'create',
        '--group',
        g,
        '--url',
        'https://example.com/refs/cat.png',
        '--name',
        'cat',
        ...M,
        '--wait',
      ],
      { env },
    );
    expect(a.exitCode).toBe(0);
    const id = a.stdout.trim();
    expect(id).toMatch(/^asset-\d{14}-\w+$/);
    expect(a.stderr).toContain(`asset ${id} is Active: use it as asset://${id}`);
    const create = sim.requests.find((q) => q.query === '?Action=CreateAsset&Version=2024-01-01');
    expect(create?.body).toEqual({
      model: 'gamma-video-2-0',
      GroupId: g,
      URL: 'https://example.com/refs/cat.png',
      AssetType: 'Image',
      Name: 'cat',
    });
    expect(sim.requests.find((q) => q.query.includes('CreateAssetGroup'))?.body).toEqual({
      GroupType: 'AIGC',
      model: 'gamma-video-2-0',
      Name: 'refs',
      Description: 'storyboard',
    });
    const get = await runGw(['beta', 'asset', 'get', id, ...M], { env });
    expect(get.stdout).toMatch(/^status: +Active$/m);
    expect(get.stdout).toMatch(/^type: +Image$/m);
    const json = await runGw(['beta', 'asset', 'get', id, ...M, '--json'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({
      ResponseMetadata: { Action: 'GetAsset', Version: '2024-01-01' },
      Result: { Id: id, Status: 'Active' },
    });
    const t = await runGw(
      ['beta', 'task', 'create', 'the cat surfs', ...M, '--first-frame', `Asset://${id}`],
      { env },
    );
    expect(t.exitCode).toBe(0);
    const journal = readFileSync(join(dirs.GW_STATE_DIR, 'journal.jsonl'), 'utf8');
    expect(journal).toContain(`"kind":"beta-asset","id":"${g}"`);
    expect(journal).toContain(`"kind":"beta-asset","id":"${id}"`);
    expect(journal).toMatch(new RegExp(`"op":"update","kind":"beta-asset","id":"${id}","state":"Active"`));
  });

  it('an asset that fails review ends Failed: wait exits 1 naming it', async () => {
    const sim = await useSim();
    const g = await group(sim);
    const ok = (
      await runGw(['beta', 'asset', 'create', '--group', g, '--url', 'https://example.com/a.mp4', ...M], {
        env: sim.env,
      })
    ).stdout.trim();
    const bad = (
      await runGw(
        ['beta', 'asset', 'create', '--group', g, '--url', 'https://example.com/sim-fail/b.wav', ...M],
        { env: sim.env },
      )
    ).stdout.trim();
    const r = await runGw(['beta', 'asset', 'wait', ok, bad, ...M], { env: sim.env });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`error: asset_failed: asset ${bad} ended Failed`);
    expect(r.stderr).toMatch(/hint: the asset library shows no failure reason/);
    // Like every wait: nothing on stdout, each asset's final state on stderr.
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^${ok} Active$`, 'm'));
    expect(r.stderr).toMatch(new RegExp(`^${bad} Failed$`, 'm'));
    const j = await runGw(['beta', 'asset', 'wait', ok, ...M, '--json'], { env: sim.env });
    expect(j.exitCode).toBe(0);
    expect(JSON.parse(j.stdout)).toMatchObject({ assets: [{ Id: ok, Status: 'Active' }] });
  });

  it('wait gives up with exit 4 and the resume command', async () => {
    const sim = await useSim({ timings: { assetProcessingMs: 600_000 } });
    const g = await group(sim);
    const id = (
      await runGw(['beta', 'asset', 'create', '--group', g, '--url', 'https://example.com/a.png', ...M], {
        env: sim.env,
      })
    ).stdout.trim();
    const r = await runGw(['beta', 'asset', 'wait', id, ...M, '--timeout', '1s'], { env: sim.env });
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain(`resume with: gw beta asset wait ${id} -m gamma-video-2-0`);
  });
});

describe('gw beta asset upload without a terminal', () => {
  it('with --group and --url: creates each asset, waits, prints the asset:// refs', async () => {
    const sim = await useSim();
    const g = await group(sim);
    sim.requests.length = 0;
    const r = await runGw(
      [
        'beta',
        'asset',
        'upload',
        '--group',
        g,
        '--url',
        'https://example.com/cat.png',
        '--url',
        'https://example.com/theme.mp3',
      ],
      { env: sim.env },
    );
    expect(r.exitCode).toBe(0);
    const refs = r.stdout.trim().split('\n');
    expect(refs).toHaveLength(2);
    for (const ref of refs) expect(ref).toMatch(/^asset:\/\/asset-\d{14}-\w+$/);
    expect(actions(sim).slice(0, 2)).toEqual(['CreateAsset', 'CreateAsset']);
    const types = [...assetStore(sim.sim).assets.values()].map((a) => [a.AssetType, a.Name]);
    expect(types).toEqual([
      ['Image', 'cat'],
      ['Audio', 'theme'],
    ]);
  });

  it('without --group: creates a group first; a Failed asset exits 1 and only Active refs are printed', async () => {
    const sim = await useSim();
    const r = await runGw(
      [
        'beta',
        'asset',
        'upload',
        '--url',
        'https://example.com/a.jpg',
        '--url',
        'https://example.com/sim-fail.mov',
        '--json',
      ],
      { env: sim.env },
    );
    expect(r.exitCode).toBe(1);
    expect(actions(sim).slice(0, 3)).toEqual(['CreateAssetGroup', 'CreateAsset', 'CreateAsset']);
    const doc = JSON.parse(r.stdout) as {
      group: string;
      assets: Array<{ Status: string; AssetType: string; ref: string }>;
    };
    expect(doc.group).toMatch(/^group-/);
    expect(doc.assets.map((a) => [a.AssetType, a.Status])).toEqual([
      ['Image', 'Active'],
      ['Video', 'Failed'],
    ]);
    const plain = await runGw(
      [
        'beta',
        'asset',
        'upload',
        '--url',
        'https://example.com/b.webp',
        '--url',
        'https://example.com/sim-fail.png',
      ],
      { env: sim.env },
    );
    expect(plain.exitCode).toBe(1);
    expect(plain.stdout.trim().split('\n')).toHaveLength(1);
    expect(plain.stderr).toMatch(/error: asset_failed: asset asset-\S+ ended Failed/);
  });

  it.each([
    [['--url', 'http://example.com/a.png'], /url: http:\/\/example.com\/a.png: must use https/],
    [['--url', 'https://192.168.1.20/a.png'], /192\.168\.1\.20 is a private address/],
    [['--url', 'https://localhost/a.png'], /loopback/],
    [['--url', 'https://files.internal/a.png'], /not a public host name/],
    [['--url', 'https://user:pw@example.com/a.png'], /credentials/],
    [['--url', 'https://example.com/blob'], /cannot tell the AssetType/],
    [[], /url: give at least one --url/],
  ])('refuses %j with exit 2 and sends nothing', async (args, message) => {
    const sim = await useSim();
    const r = await runGw(['beta', 'asset', 'upload', ...args], { env: sim.env });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(sim.requests).toEqual([]);
  });
});

describe('gw beta asset: lists, tenants, and what is not offered', () => {
  it('list --all walks every page', async () => {
    const sim = await useSim();
    const g = await group(sim);
    const env = sim.env;
    for (const n of [1, 2, 3, 4, 5]) {
      expect(
        (
          await runGw(
            ['beta', 'asset', 'create', '--group', g, '--url', `https://example.com/${n}.png`, ...M],
            { env },
          )
        ).exitCode,
      ).toBe(0);
    }
    sim.requests.length = 0;
    const r = await runGw(
      ['beta', 'asset', 'list', '--group', g, ...M, '--all', '--page-size', '2', '--json'],
      { env },
    );
    expect(r.exitCode).toBe(0);
    const doc = JSON.parse(r.stdout) as { Items: unknown[]; TotalCount: number };
    expect(doc.TotalCount).toBe(5);
    expect(doc.Items).toHaveLength(5);
    expect(sim.requests.map((q) => (q.body as { PageNumber: number }).PageNumber)).toEqual([1, 2, 3]);
    expect(sim.requests[0]?.body).toMatchObject({
      Filter: { GroupType: 'AIGC', GroupIds: [g] },
      PageSize: 2,
    });
    const table = await runGw(['beta', 'asset', 'list', '--group', g, ...M], { env });
    expect(table.stdout.match(/asset-\d{14}/g)).toHaveLength(5);
  });

  it('a second tenant gets ResourceNotFound.Asset / .AssetGroup, rendered like other gateway errors', async () => {
    const sim = await useSim({
      tokens: {
        [DEFAULT_SIM_TOKEN]: { tenant: 'default', models: '*' },
        [OTHER]: { tenant: 't2', models: '*' },
      },
    });
    const g = await group(sim);
    const id = (
      await runGw(['beta', 'asset', 'create', '--group', g, '--url', 'https://example.com/a.png', ...M], {
        env: sim.env,
      })
    ).stdout.trim();
    const env = { ...sim.env, GW_TOKEN: OTHER };
    const get = await runGw(['beta', 'asset', 'get', id, ...M], { env });
    expect(get.exitCode).toBe(1);
    expect(get.stderr).toMatch(
      new RegExp(
        `^error: ResourceNotFound.Asset: asset ${id} was not found\\nrequest id: req-sim-\\w+\\nhint: the asset does not exist or belongs to another tenant`,
      ),
    );
    const json = await runGw(['beta', 'asset', 'get', id, ...M, '--json'], { env });
    expect(JSON.parse(json.stderr)).toMatchObject({
      error: { code: 'ResourceNotFound.Asset', request_id: expect.stringMatching(/^req-sim-/) as unknown },
    });
    const create = await runGw(
      ['beta', 'asset', 'create', '--group', g, '--url', 'https://example.com/b.png', ...M],
      { env },
    );
    expect(create.stderr).toMatch(/^error: ResourceNotFound.AssetGroup: /m);
    const task = await runGw(['beta', 'task', 'create', 'x', ...M, '--first-frame', id], { env });
    expect(task.stderr).toMatch(/^error: ResourceNotFound.Asset: /m);
    const list = await runGw(['beta', 'asset', 'list', '--group', g, ...M, '--json'], { env });
    expect(JSON.parse(list.stdout)).toMatchObject({ Result: { Items: [], TotalCount: 0 } });
  });

  it('offers no update, delete or moderation skip', async () => {
    const help = await runGw(['beta', 'asset', '--help']);
    expect(help.stdout).not.toMatch(/^\s+(update|delete)\b/m);
    for (const verb of ['delete', 'update']) {
      const r = await runGw(['beta', 'asset', verb, 'asset-1', ...M]);
      expect(r.exitCode).toBe(2);
    }
  });

  it.each([
    [['group', 'create', '--name', 'x', '-m', 'gv2'], /model: "gv2" is not accepted/],
    [['group', 'create', '--name', ' ', ...M], /Name: must not be empty/],
    [
      ['create', '--group', 'g', '--url', 'https://e.com/a.png', '--type', 'Picture', ...M],
      /AssetType must be one of Image, Video, Audio/,
    ],
    [['create', '--group', 'g', '--url', 'http://e.com/a.png', ...M], /URL: must use https/],
    [['create', '--group', 'g', '--url', 'https://10.0.0.8/a.png', ...M], /private address/],
    [['create', '--group', 'g', '--url', 'https://e.com/file', ...M], /cannot tell the AssetType/],
    [
      ['create', '--group', 'g', '--url', 'https://e.com/a.png', '-m', 'gamma-video-2-0-fast-filter-off-v1'],
      /no version suffix/,
    ],
    [['list', '--group', 'g', ...M, '--page', '0'], /page: must be an integer >= 1/],
    [['list', ...M], /required option '--group <id>'/],
    [['get', 'asset-1', '-m', 'seedance'], /is not accepted/],
    [['wait', 'asset-1', ...M, '--timeout', 'later'], /not a duration/],
  ])('refuses %j with exit 2 and sends nothing', async (args, message) => {
    const sim = await useSim();
    const r = await runGw(['beta', 'asset', ...args], { env: sim.env });
    expect(r.stderr).toMatch(message);
    expect(r.exitCode).toBe(2);
    expect(sim.requests).toEqual([]);
  });
});
