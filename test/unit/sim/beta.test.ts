import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM_TOKEN } from '../../../src/sim/config.js';
import { assetStore } from '../../../src/sim/routes/beta-assets.js';
import { betaTaskStore, setBetaResolver } from '../../../src/sim/routes/beta-tasks.js';
import { useSim } from '../../helpers/sim.js';

const TASKS = '/beta/api/v3/contents/generations/tasks';
const OTHER = 'sk-other-1111';
const T0 = 1_767_225_600_000;

type Sim = Awaited<ReturnType<typeof useSim>>;
interface Answer {
  status: number;
  json: Record<string, unknown> & {
    error?: { code: string; message: string; param: string; type: string };
    ResponseMetadata?: {
      RequestId: string;
      Action: string;
      Version: string;
      Error?: { Code: string; Message: string };
    };
    Result?: Record<string, unknown>;
  };
  requestId: string | null;
}

/** A sim with a hand-driven clock (state machines are computed from sim.now()) and a second tenant. */
async function clockSim(
  o: { betaFilterOffUnmapped?: boolean } = {},
): Promise<Sim & { clock: { t: number } }> {
  const clock = { t: T0 };
  const sim = await useSim({
    now: () => clock.t,
    tokens: {
      [DEFAULT_SIM_TOKEN]: { tenant: 'default', models: '*' },
      [OTHER]: { tenant: 't2', models: '*' },
      'sk-fast-only': { tenant: 'default', models: ['gamma-video-2-0-fast'] },
    },
    timings: { betaQueuedMs: 1000, betaRunningMs: 4000, assetProcessingMs: 500 },
    ...o,
  });
  return Object.assign(sim, { clock });
}

async function call(
  sim: Sim,
  method: string,
  path: string,
  body?: unknown,
  o: { token?: string; raw?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${o.token ?? DEFAULT_SIM_TOKEN}` };
  let payload: string | undefined;
  if (o.raw !== undefined || body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = o.raw ?? JSON.stringify(body);
  }
  const res = await fetch(sim.baseUrl + path, {
    method,
    headers,
    ...(payload !== undefined ? { body: payload } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    json: text ? (JSON.parse(text) as Answer['json']) : {},
    requestId: res.headers.get('x-gateway-request-id'),
  };
}

const asset = (sim: Sim, action: string, body: unknown, token?: string, version = '2024-01-01') =>
  call(sim, 'POST', `/beta/?Action=${action}&Version=${version}`, body, token !== undefined ? { token } : {});

const task = (text = 'a kite', extra: Record<string, unknown> = {}) => ({
  model: 'gamma-video-2-0',
  content: [{ type: 'text', text }],
  ...extra,
});

async function activeAsset(
  sim: Sim & { clock: { t: number } },
  url = 'https://example.com/a.png',
): Promise<string> {
  const g = await asset(sim, 'CreateAssetGroup', { model: 'gamma-video-2-0', Name: 'g', GroupType: 'AIGC' });
  const a = await asset(sim, 'CreateAsset', {
    model: 'gamma-video-2-0',
    GroupId: g.json.Result?.Id,
    URL: url,
    AssetType: 'Image',
    Name: 'a',
  });
  sim.clock.t += 600;
  return a.json.Result?.Id as string;
}

describe('sim beta tasks: create (§2.4, §4.1, §7)', () => {
  it('answers {id} only and keeps the public model (dated names normalised, §2.1)', async () => {
    const sim = await clockSim();
    const r = await call(sim, 'POST', TASKS, task('x', { model: 'gamma-video-2-0-mini-260615' }));
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual(['id']);
    expect(r.json.id).toMatch(/^cgt-/);
    const rec = await call(sim, 'GET', `${TASKS}/${String(r.json.id)}`);
    expect(rec.json).toMatchObject({ model: 'gamma-video-2-0-mini', status: 'queued' });
    const list = await call(sim, 'GET', `${TASKS}?filter.model=gamma-video-2-0-mini-260615`);
    expect((list.json.items as Array<{ model: string }>).map((i) => i.model)).toEqual([
      'gamma-video-2-0-mini',
    ]);
  });

  it.each([
    [task('x', { duration: 3 }), 400, 'invalid_duration', 'duration'],
    [task('x', { duration: 16 }), 400, 'invalid_duration', 'duration'],
    [task('x', { model: 'gv2' }), 404, 'model_not_found', 'model'],
    [task('x', { model: 'gamma-video-2-0-filter-off-260128' }), 404, 'model_not_found', 'model'],
    [task('x', { resolution: '4k', model: 'gamma-video-2-0-fast' }), 400, 'invalid_request', 'resolution'],
    [task('x', { model: 'gamma-video-2-0-mini', draft: true }), 400, 'invalid_request', 'draft'],
    [
      task('x', { model: 'gamma-video-2-0-mini', service_tier: 'flex' }),
      400,
      'invalid_request',
      'service_tier',
    ],
    [
      task('x', { model: 'gamma-video-2-0-mini', references: { audio: [] } }),
      400,
      'invalid_request',
      'references.audio',
    ],
    [task('x', { priority: 10 }), 400, 'invalid_request', 'priority'],
    [task('x', { ratio: '2:1' }), 400, 'invalid_request', 'ratio'],
    [task('x', { callback_url: 'http://93.184.216.34/' }), 400, 'invalid_request', 'callback_url'],
    [task('x', { callback_url: '  ' }), 400, 'invalid_request', 'callback_url'],
    [task('x', { callback_url: 'https://127.0.0.1/' }), 400, 'invalid_request', 'callback_url'],
    [task('x', { CallbackURL: 'https://100.64.1.1/' }), 400, 'invalid_request', 'callback_url'],
    [{ model: 'gamma-video-2-0' }, 400, 'invalid_request', 'content'],
    [task(''), 400, 'invalid_request', 'content'],
    [
      task('x', { content: [{ type: 'image_url', image_url: { url: 'https://e.com/a.png' } }] }),
      400,
      'invalid_request',
      'content[0].image_url.url',
    ],
  ])('refuses %j with %d %s', async (body, status, code, param) => {
    const sim = await clockSim();
    const r = await call(sim, 'POST', TASKS, body);
    expect(r.status).toBe(status);
    expect(r.json.error).toMatchObject({ code, param });
    expect(r.json.error?.message).toContain(`Request id: ${r.requestId}`);
    expect(betaTaskStore(sim.sim).size).toBe(0);
  });

  it('answers 400 invalid_request for a body that is not JSON (§7)', async () => {
    const sim = await clockSim();
    const r = await call(sim, 'POST', TASKS, undefined, { raw: '{"model": ' });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'invalid_request', type: 'BadRequest' });
  });

  it('callback_url wins over CallbackURL (§6 rule 5) and hosts resolve with the injected resolver', async () => {
    const sim = await clockSim();
    setBetaResolver(sim.sim, (host) =>
      Promise.resolve(
        host === 'hooks.example.com' ? ['93.184.216.34'] : host === 'lan.example.com' ? ['192.168.1.5'] : [],
      ),
    );
    const ok = await call(
      sim,
      'POST',
      TASKS,
      task('x', { CallbackURL: 'http://127.0.0.1', callback_url: 'https://hooks.example.com/cb' }),
    );
    expect(ok.status).toBe(200);
    const stored = betaTaskStore(sim.sim).get(ok.json.id as string);
    expect(stored?.body).toMatchObject({ callback_url: 'https://hooks.example.com/cb' });
    expect(stored?.body).not.toHaveProperty('CallbackURL');
    const lan = await call(sim, 'POST', TASKS, task('x', { callback_url: 'https://lan.example.com/cb' }));
    expect(lan.json.error).toMatchObject({ code: 'invalid_request', param: 'callback_url' });
    expect(lan.json.error?.message).toMatch(/192\.168\.1\.5, a private address/);
  });

  it('answers model_not_found for a model the token does not see, and 503 model_mapping_required on trigger', async () => {
    const sim = await clockSim();
    const r = await call(sim, 'POST', TASKS, task(), { token: 'sk-fast-only' });
    expect(r.status).toBe(404);
    expect(r.json.error?.code).toBe('model_not_found');
    expect((await call(sim, 'POST', TASKS, task('x', { model: 'gamma-video-2-0-filter-off' }))).status).toBe(
      200,
    );
    const unmapped = await clockSim({ betaFilterOffUnmapped: true });
    const m = await call(unmapped, 'POST', TASKS, task('x', { model: 'gamma-video-2-0-fast-filter-off' }));
    expect(m.status).toBe(503);
    expect(m.json.error).toMatchObject({ code: 'model_mapping_required', type: 'ServerError' });
    expect((await call(unmapped, 'POST', TASKS, task())).status).toBe(200);
  });

  it('answers 503 service_unavailable to an account that has not opened the family or the asset library (§7)', async () => {
    const sim = await useSim({
      tokens: {
        [DEFAULT_SIM_TOKEN]: { tenant: 'default', models: '*' },
        'sk-no-beta': { tenant: 'nb', models: '*', notOpened: ['beta-tasks'] },
        'sk-no-assets': { tenant: 'na', models: '*', notOpened: ['asset-library'] },
      },
    });
    const t = await call(sim, 'POST', TASKS, task(), { token: 'sk-no-beta' });
    expect(t.status).toBe(503);
    expect(t.json.error?.code).toBe('service_unavailable');
    expect(t.requestId).toMatch(/^req-sim-/);
    expect((await call(sim, 'GET', `${TASKS}/cgt-x`, undefined, { token: 'sk-no-beta' })).status).toBe(503);
    expect((await call(sim, 'GET', TASKS, undefined, { token: 'sk-no-beta' })).status).toBe(503);
    // The asset library is a separate service: open for this account.
    const group = (token: string) =>
      asset(sim, 'CreateAssetGroup', { model: 'gamma-video-2-0', Name: 'g', GroupType: 'AIGC' }, token);
    expect((await group('sk-no-beta')).status).toBe(200);

    const a = await group('sk-no-assets');
    expect(a.status).toBe(503);
    expect(a.json.ResponseMetadata?.Error?.Code).toBe('service_unavailable');
    expect((await call(sim, 'POST', TASKS, task(), { token: 'sk-no-assets' })).status).toBe(200);
    expect((await call(sim, 'POST', TASKS, task())).status).toBe(200);
  });

  it('binds asset:// and Asset:// references to the tenant Active assets (§2.4, §3)', async () => {
    const sim = await clockSim();
    const id = await activeAsset(sim);
    const ok = await call(sim, 'POST', TASKS, {
      model: 'gamma-video-2-0',
      content: [
        { type: 'image_url', image_url: { url: `Asset://${id}` }, role: 'first_frame' },
        { type: 'image_url', image_url: { url: `asset://${id}` }, role: 'reference_image' },
      ],
    });
    expect(ok.status).toBe(200);
    expect(betaTaskStore(sim.sim).get(ok.json.id as string)?.body.content[0]).toMatchObject({
      image_url: { url: `asset://${id}` },
    });
    // another tenant cannot use it
    const other = await call(
      sim,
      'POST',
      TASKS,
      { model: 'gamma-video-2-0', content: [{ type: 'image_url', image_url: { url: `asset://${id}` } }] },
      { token: OTHER },
    );
    expect(other.status).toBe(404);
    expect(other.json.error).toMatchObject({
      code: 'ResourceNotFound.Asset',
      param: 'content[0].image_url.url',
    });
    // a Processing asset cannot enter a task yet
    const g = await asset(sim, 'CreateAssetGroup', {
      model: 'gamma-video-2-0',
      Name: 'g',
      GroupType: 'AIGC',
    });
    const p = await asset(sim, 'CreateAsset', {
      model: 'gamma-video-2-0',
      GroupId: g.json.Result?.Id,
      URL: 'https://e.com/v.mp4',
      AssetType: 'Video',
      Name: 'v',
    });
    const busy = await call(
      sim,
      'POST',
      TASKS,
      task('edit', {
        content: [
          { type: 'text', text: 'edit' },
          {
            type: 'video_url',
            video_url: { url: `asset://${String(p.json.Result?.Id)}` },
            role: 'reference_video',
          },
        ],
      }),
    );
    expect(busy.status).toBe(400);
    expect(busy.json.error?.message).toMatch(/is Processing; only Active assets/);
  });
});

describe('sim beta tasks: states from the clock (§3)', () => {
  it('goes queued → running → succeeded with a real MP4 and last frame PNG on the CDN', async () => {
    const sim = await clockSim();
    const { json } = await call(
      sim,
      'POST',
      TASKS,
      task('x', { return_last_frame: true, resolution: '480p', ratio: '9:16', duration: 6 }),
    );
    const get = async () => (await call(sim, 'GET', `${TASKS}/${String(json.id)}`)).json;
    expect((await get()).status).toBe('queued');
    sim.clock.t += 1000;
    expect((await get()).status).toBe('running');
    sim.clock.t += 4000;
    const done = await get();
    expect(done).toMatchObject({
      status: 'succeeded',
      resolution: '480p',
      ratio: '9:16',
      duration: 6,
      framespersecond: 24,
      error: null,
      created_at: T0 / 1000,
      updated_at: T0 / 1000 + 5,
    });
    const content = done.content as { video_url: string; last_frame_url: string };
    expect((done.usage as { total_tokens: number }).total_tokens).toBeGreaterThan(0);
    const mp4 = Buffer.from(await (await fetch(content.video_url)).arrayBuffer());
    expect(mp4.subarray(4, 8).toString('latin1')).toBe('ftyp');
    const png = Buffer.from(await (await fetch(content.last_frame_url)).arrayBuffer());
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect((await get()).content).toEqual(content); // stable URLs
  });

  it.each([
    ['[sim:fail]', 'failed'],
    ['[sim:expire]', 'expired'],
    ['[sim:never]', 'running'],
  ])('trigger %s ends %s', async (trigger, status) => {
    const sim = await clockSim();
    const { json } = await call(sim, 'POST', TASKS, task(`a kite ${trigger}`));
    sim.clock.t += 60_000;
    const rec = (await call(sim, 'GET', `${TASKS}/${String(json.id)}`)).json;
    expect(rec.status).toBe(status);
    expect(rec.content).toBeUndefined();
  });

  it('expires a task past execution_expires_after', async () => {
    const sim = await clockSim();
    const { json } = await call(sim, 'POST', TASKS, task('x [sim:never]', { execution_expires_after: 3600 }));
    sim.clock.t += 3_600_000;
    expect((await call(sim, 'GET', `${TASKS}/${String(json.id)}`)).json.status).toBe('expired');
  });
});

describe('sim beta tasks: DELETE by status (§3, §7, wire-formats §6)', () => {
  it('queued → cancelled; cancelled → 409; running → 409 Conflict; finished → hidden (404 afterwards)', async () => {
    const sim = await clockSim();
    const q = (await call(sim, 'POST', TASKS, task())).json.id as string;
    expect((await call(sim, 'DELETE', `${TASKS}/${q}`)).status).toBe(200);
    expect((await call(sim, 'GET', `${TASKS}/${q}`)).json.status).toBe('cancelled');
    const again = await call(sim, 'DELETE', `${TASKS}/${q}`);
    expect(again.status).toBe(409);
    expect(again.json.error?.type).toBe('Conflict');

    const r = (await call(sim, 'POST', TASKS, task())).json.id as string;
    sim.clock.t += 1500;
    const running = await call(sim, 'DELETE', `${TASKS}/${r}`);
    expect(running.status).toBe(409);
    expect(running.json).toEqual({
      error: {
        code: 'InvalidAction.RunningTaskDeletion',
        message: expect.stringContaining(r) as unknown,
        param: 'task_id',
        type: 'Conflict',
      },
    });
    sim.clock.t += 10_000;
    expect((await call(sim, 'DELETE', `${TASKS}/${r}`)).json).toEqual({});
    expect((await call(sim, 'GET', `${TASKS}/${r}`)).json.error?.code).toBe('task_not_found');
    expect(betaTaskStore(sim.sim).get(r)?.hidden).toBe(true); // audit kept
    expect(((await call(sim, 'GET', TASKS)).json.items as Array<{ id: string }>).map((i) => i.id)).toEqual([
      q,
    ]);
  });
});

describe('sim beta tasks: list (§4.1)', () => {
  it('pages newest first and filters by status, model and task ids (comma-separated and repeated)', async () => {
    const sim = await clockSim();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        (await call(sim, 'POST', TASKS, task(`t${i}`, i % 2 ? { model: 'gamma-video-2-0-fast' } : {}))).json
          .id as string,
      );
      sim.clock.t += 10;
    }
    const page = async (q: string) =>
      (await call(sim, 'GET', `${TASKS}?${q}`)).json as { items: Array<{ id: string }>; total: number };
    expect(await page('page_num=1&page_size=2')).toMatchObject({
      total: 5,
      items: [{ id: ids[4] }, { id: ids[3] }],
    });
    expect((await page('page_num=3&page_size=2')).items.map((i) => i.id)).toEqual([ids[0]]);
    expect((await page('filter.model=gamma-video-2-0-fast')).total).toBe(2);
    expect((await page(`filter.task_ids=${ids[0]},${ids[2]}`)).total).toBe(2);
    expect((await page(`filter.task_ids=${ids[0]}&filter.task_ids=${ids[1]}`)).total).toBe(2);
    expect((await page('filter.status=queued')).total).toBe(5);
    expect((await page('filter.status=succeeded')).total).toBe(0);
    expect((await page('')).total).toBe(5);
    expect((await call(sim, 'GET', TASKS, undefined, { token: OTHER })).json).toEqual({
      items: [],
      total: 0,
    });
    for (const bad of [
      'page_num=0',
      'page_size=0',
      'page_size=501',
      'filter.status=done',
      'filter.model=gv2',
    ]) {
      const r = await call(sim, 'GET', `${TASKS}?${bad}`);
      expect(r.status).toBe(400);
      expect(r.json.error?.code).toBe('invalid_request');
    }
  });

  it('isolates tenants: task_not_found for get and delete', async () => {
    const sim = await clockSim();
    const id = (await call(sim, 'POST', TASKS, task())).json.id as string;
    for (const m of ['GET', 'DELETE']) {
      const r = await call(sim, m, `${TASKS}/${id}`, undefined, { token: OTHER });
      expect(r.status).toBe(404);
      expect(r.json.error?.code).toBe('task_not_found');
    }
  });
});

describe('sim beta assets (§4.2, §7)', () => {
  it('creates groups and assets with the envelope; Processing → Active; Failed on sim-fail or a non-public URL', async () => {
    const sim = await clockSim();
    const g = await asset(sim, 'CreateAssetGroup', {
      model: 'gamma-video-2-0-260128',
      Name: 'refs',
      GroupType: 'AIGC',
      Description: 'd',
    });
    expect(g.status).toBe(200);
    expect(g.json).toEqual({
      ResponseMetadata: {
        RequestId: g.requestId,
        Action: 'CreateAssetGroup',
        Version: '2024-01-01',
        Service: 'ark',
        Region: 'ap-southeast-1',
      },
      Result: { Id: expect.stringMatching(/^group-\d{14}-/) as unknown },
    });
    const gid = g.json.Result?.Id as string;
    const mk = async (key: string, url: string) =>
      (
        await asset(sim, 'CreateAsset', {
          model: 'gamma-video-2-0',
          GroupId: gid,
          [key]: url,
          AssetType: 'Image',
          Name: 'n',
        })
      ).json.Result as { Id: string };
    const ok = await mk('URL', 'https://example.com/a.png');
    expect(Object.keys(ok)).toEqual(['Id']);
    const viaUrl = await mk('url', 'https://example.com/b.png');
    const bad = await mk('Url', 'https://example.com/sim-fail.png');
    const priv = await mk('URL', 'https://10.0.0.1/c.png');
    const get = async (id: string) =>
      (await asset(sim, 'GetAsset', { model: 'gamma-video-2-0', Id: id })).json.Result;
    expect(await get(ok.Id)).toMatchObject({
      Id: ok.Id,
      GroupId: gid,
      AssetType: 'Image',
      Status: 'Processing',
    });
    sim.clock.t += 500;
    expect((await get(ok.Id))?.Status).toBe('Active');
    expect((await get(viaUrl.Id))?.URL).toBe('https://example.com/b.png');
    expect((await get(bad.Id))?.Status).toBe('Failed');
    expect((await get(priv.Id))?.Status).toBe('Failed');
    const list = await asset(sim, 'ListAssets', {
      model: 'gamma-video-2-0',
      Filter: { GroupType: 'AIGC', GroupIds: [gid] },
      PageNumber: 2,
      PageSize: 3,
    });
    expect(list.json.Result).toMatchObject({
      TotalCount: 4,
      PageNumber: 2,
      PageSize: 3,
      Items: [{ Id: ok.Id, Status: 'Active' }],
    });
    expect(assetStore(sim.sim).assets.get(ok.Id)?.model).toBe('gamma-video-2-0');
  });

  it.each([
    ['UpdateAsset', {}, 403, 'InvalidAction'],
    ['DeleteAssetGroup', {}, 403, 'InvalidAction'],
    ['ListAssetGroups', {}, 404, 'InvalidActionOrVersion'],
    ['CreateAsset', { Moderation: { Strategy: 'Skip' } }, 400, 'moderation_skip_not_allowed'],
    ['CreateAssetGroup', { model: 'gamma-video-2-0', Name: 'x', GroupType: 'Other' }, 400, 'invalid_request'],
    ['CreateAssetGroup', { model: 'gv2', Name: 'x', GroupType: 'AIGC' }, 404, 'model_not_found'],
    [
      'CreateAsset',
      {
        model: 'gamma-video-2-0',
        GroupId: 'group-nope',
        URL: 'https://e.com/a.png',
        AssetType: 'Image',
        Name: 'a',
      },
      404,
      'ResourceNotFound.AssetGroup',
    ],
    [
      'CreateAsset',
      { model: 'gamma-video-2-0', GroupId: 'g', URL: 'https://e.com/a.png', AssetType: 'Picture', Name: 'a' },
      400,
      'invalid_request',
    ],
    ['GetAsset', { model: 'gamma-video-2-0', Id: 'asset-nope' }, 404, 'ResourceNotFound.Asset'],
    ['ListAssets', { model: 'gamma-video-2-0', Filter: { GroupType: 'X' } }, 400, 'invalid_request'],
    [
      'ListAssets',
      { model: 'gamma-video-2-0', Filter: { GroupType: 'AIGC' }, PageNumber: 0 },
      400,
      'invalid_request',
    ],
  ])('%s %j → %d %s in ResponseMetadata.Error', async (action, body, status, code) => {
    const sim = await clockSim();
    const r = await asset(sim, action, body);
    expect(r.status).toBe(status);
    expect(r.json.ResponseMetadata).toMatchObject({
      RequestId: r.requestId,
      Action: action,
      Error: { Code: code },
    });
    expect(r.json).not.toHaveProperty('Result');
  });

  it('refuses another Version, and isolates tenants (ResourceNotFound.Asset / .AssetGroup)', async () => {
    const sim = await clockSim();
    expect(
      (await asset(sim, 'GetAsset', { model: 'gamma-video-2-0', Id: 'x' }, undefined, '2023-01-01')).json
        .ResponseMetadata?.Error?.Code,
    ).toBe('InvalidActionOrVersion');
    const id = await activeAsset(sim);
    const gid = assetStore(sim.sim).assets.get(id)?.GroupId;
    const r = await asset(sim, 'GetAsset', { model: 'gamma-video-2-0', Id: id }, OTHER);
    expect(r.json.ResponseMetadata?.Error?.Code).toBe('ResourceNotFound.Asset');
    const c = await asset(
      sim,
      'CreateAsset',
      { model: 'gamma-video-2-0', GroupId: gid, URL: 'https://e.com/a.png', AssetType: 'Image', Name: 'a' },
      OTHER,
    );
    expect(c.json.ResponseMetadata?.Error?.Code).toBe('ResourceNotFound.AssetGroup');
    const l = await asset(
      sim,
      'ListAssets',
      { model: 'gamma-video-2-0', Filter: { GroupType: 'AIGC', GroupIds: [gid] } },
      OTHER,
    );
    expect(l.json.Result).toMatchObject({ Items: [], TotalCount: 0 });
  });
});
