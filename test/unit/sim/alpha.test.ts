import { describe, expect, it } from 'vitest';
import { alphaStore } from '../../../src/sim/routes/alpha.js';
import { makeJpeg, makePng } from '../../helpers/images.js';
import { useSim } from '../../helpers/sim.js';

const PATH = '/alpha/v1/videos/image2video';
const PNG = makePng(64, 36).toString('base64');
const MASK = makePng(64, 36, 0xff).toString('base64');
const URL_IMG = 'https://example.com/first.png';

type Sim = Awaited<ReturnType<typeof useSim>>;

/** The alpha envelope (§2.2) as the tests read it. */
interface Answer {
  code: number;
  message: string;
  request_id: string;
  data: { task_id: string; [k: string]: unknown };
}

async function post(
  sim: Sim,
  body: string | FormData | Record<string, unknown> | unknown[],
  o: { token?: string | null; contentType?: string } = {},
): Promise<{ status: number; json: Answer; requestId: string | null }> {
  const headers: Record<string, string> = {};
  if (o.token !== null) headers.authorization = `Bearer ${o.token ?? sim.env.GW_TOKEN}`;
  let payload: string | FormData;
  if (typeof body === 'string' || body instanceof FormData) payload = body;
  else {
    payload = JSON.stringify(body);
    headers['content-type'] = 'application/json';
  }
  if (o.contentType !== undefined) headers['content-type'] = o.contentType;
  const res = await fetch(sim.baseUrl + PATH, { method: 'POST', headers, body: payload });
  return {
    status: res.status,
    json: (await res.json()) as Answer,
    requestId: res.headers.get('x-gateway-request-id'),
  };
}

describe('sim: POST /alpha/v1/videos/image2video', () => {
  it('creates a submitted task from a URL image (§2.2: code 0, ms timestamps, request id)', async () => {
    const sim = await useSim({ now: () => 1_767_225_600_123 });
    const r = await post(sim, { image: URL_IMG, external_task_id: 'job-1' });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      code: 0,
      message: 'success',
      request_id: r.requestId,
      data: {
        task_status: 'submitted',
        created_at: 1_767_225_600_123,
        updated_at: 1_767_225_600_123,
        task_info: { external_task_id: 'job-1' },
      },
    });
    const task = alphaStore(sim.sim).get('default')?.get(r.json.data.task_id);
    expect(task).toMatchObject({ model_name: 'alpha-v1', encoding: 'json', external_task_id: 'job-1' });
  });

  it('accepts a Base64 PNG or JPEG image and refuses Base64 that is not one (wire-formats §5)', async () => {
    const sim = await useSim();
    expect((await post(sim, { image: PNG })).status).toBe(200);
    expect((await post(sim, { image: makeJpeg(640, 360).toString('base64') })).status).toBe(200);
    const gif = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1').toString('base64');
    const r = await post(sim, { image: gif });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      code: 1201,
      message: expect.stringContaining('image: Base64 must decode to a PNG or JPEG') as string,
      request_id: r.requestId,
    });
  });

  it.each([
    ['image missing (§4 rule 1)', { image: undefined }, 'image: is required'],
    [
      'cfg_scale with a v2 model (§4 rule 4)',
      { model_name: 'alpha-v2-1', cfg_scale: 0.5 },
      'cfg_scale: only',
    ],
    ['cfg_scale out of range (§8)', { cfg_scale: 2 }, 'cfg_scale: must be a number from 0 to 1'],
    [
      'voice_list without sound (§4 rule 3)',
      { model_name: 'alpha-v2-6', voice_list: [{ voice_id: 'v' }] },
      'voice_list: requires sound = on',
    ],
    [
      'voice_list with 3 entries (§8)',
      { model_name: 'alpha-v2-6', sound: 'on', voice_list: [{}, {}, {}] },
      'voice_list: must have at most 2',
    ],
    ['sound with alpha-v1 (§2.1)', { sound: 'on' }, 'sound: only allowed'],
    [
      'image_tail with camera_control (§4 rule 2)',
      { image_tail: URL_IMG, camera_control: { type: 'simple', config: { zoom: 5 } } },
      'camera_control: cannot be combined with image_tail',
    ],
    [
      '7 dynamic mask groups (§8)',
      {
        dynamic_masks: Array.from({ length: 7 }, () => ({
          mask: MASK,
          trajectories: [
            { x: 0, y: 0 },
            { x: 1, y: 1 },
          ],
        })),
      },
      'dynamic_masks: must have at most 6 groups',
    ],
    [
      '1 trajectory point (§8)',
      { dynamic_masks: [{ mask: MASK, trajectories: [{ x: 0, y: 0 }] }] },
      'dynamic_masks[0].trajectories: has too few points',
    ],
    ['duration as a number (§2.1)', { duration: 5 }, 'duration: must be the string "5" or "10"'],
    ['mode outside std|pro (§2.1)', { mode: 'max' }, 'mode: must be one of std, pro'],
    ['aspect ratio outside the enum (§2.1)', { aspect_ratio: '4:3' }, 'aspect_ratio: must be one of'],
  ])('answers 400/1201 for %s', async (_name, extra, words) => {
    const sim = await useSim();
    const r = await post(sim, { image: URL_IMG, ...extra });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe(1201);
    expect(r.json.message).toContain(words);
    expect(r.json.request_id).toBe(r.requestId);
  });

  it('accepts masks whose resolution differs from the image: §4 rule 5 fails the upstream task, not the creation', async () => {
    const sim = await useSim();
    const small = makePng(32, 18).toString('base64');
    const r = await post(sim, { image: PNG, static_mask: small });
    expect(r.status).toBe(200);
  });

  it('answers 404/1203 for a model that does not exist or that the token cannot see', async () => {
    const sim = await useSim({
      tokens: {
        'sk-all': { tenant: 'a', models: '*' },
        'sk-v2only': { tenant: 'b', models: ['alpha-v2-6'] },
      },
    });
    const unknown = await post(sim, { image: URL_IMG, model_name: 'alpha-v9' }, { token: 'sk-all' });
    expect([unknown.status, unknown.json.code]).toEqual([404, 1203]);
    const invisible = await post(sim, { image: URL_IMG, model_name: 'alpha-v1-6' }, { token: 'sk-v2only' });
    expect([invisible.status, invisible.json.code]).toEqual([404, 1203]);
    // the default model alpha-v1 is invisible to that token too
    const byDefault = await post(sim, { image: URL_IMG }, { token: 'sk-v2only' });
    expect([byDefault.status, byDefault.json.code]).toEqual([404, 1203]);
    const ok = await post(sim, { image: URL_IMG, model_name: 'alpha-v2-6' }, { token: 'sk-v2only' });
    expect(ok.status).toBe(200);
  });

  it('keeps tasks per tenant', async () => {
    const sim = await useSim({
      tokens: { 'sk-a': { tenant: 'a', models: '*' }, 'sk-b': { tenant: 'b', models: '*' } },
    });
    const a = await post(sim, { image: URL_IMG }, { token: 'sk-a' });
    const b = await post(sim, { image: URL_IMG }, { token: 'sk-b' });
    const store = alphaStore(sim.sim);
    expect([...(store.get('a')?.keys() ?? [])]).toEqual([a.json.data.task_id]);
    expect([...(store.get('b')?.keys() ?? [])]).toEqual([b.json.data.task_id]);
  });

  it('answers 401/1002 without a token, in the alpha envelope', async () => {
    const sim = await useSim();
    const r = await post(sim, { image: URL_IMG }, { token: null });
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ code: 1002, request_id: r.requestId });
  });

  it('answers 400/1200 for a body that is not JSON, not an object, or of another content type', async () => {
    const sim = await useSim();
    const broken = await post(sim, '{"image":', { contentType: 'application/json' });
    expect([broken.status, broken.json.code]).toEqual([400, 1200]);
    const array = await post(sim, [URL_IMG]);
    expect([array.status, array.json.code]).toEqual([400, 1200]);
    const text = await post(sim, 'image=x', { contentType: 'text/plain' });
    expect([text.status, text.json.code]).toEqual([400, 1200]);
    const empty = await post(sim, '', { contentType: 'application/json' });
    expect([empty.status, empty.json.code]).toEqual([400, 1200]);
  });

  it('accepts multipart/form-data with JSON-encoded structured fields and a numeric cfg_scale (§2.1)', async () => {
    const sim = await useSim();
    const form = new FormData();
    form.append('image', PNG);
    form.append('cfg_scale', '0.5');
    form.append('duration', '10');
    form.append(
      'dynamic_masks',
      JSON.stringify([
        {
          mask: MASK,
          trajectories: [
            { x: 1, y: 2 },
            { x: 3, y: 4 },
          ],
        },
      ]),
    );
    const r = await post(sim, form);
    expect(r.status).toBe(200);
    expect(alphaStore(sim.sim).get('default')?.get(r.json.data.task_id)?.encoding).toBe('multipart');
  });

  it('multipart: a file part for image is read as its bytes; broken JSON in a structured field is 1201', async () => {
    const sim = await useSim();
    const form = new FormData();
    form.append('image', new Blob([makePng(8, 8)], { type: 'image/png' }), 'first.png');
    expect((await post(sim, form)).status).toBe(200);
    const bad = new FormData();
    bad.append('image', URL_IMG);
    bad.append('camera_control', '{type: simple}');
    const r = await post(sim, bad);
    expect([r.status, r.json.code]).toEqual([400, 1201]);
    expect(r.json.message).toContain('camera_control: must be JSON');
    const gif = new FormData();
    gif.append('image', new Blob([Buffer.from('GIF89a')]), 'x.gif');
    expect((await post(sim, gif)).json.code).toBe(1201);
  });

  it('answers 400/1200 for a multipart body that does not parse', async () => {
    const sim = await useSim();
    const r = await post(sim, '--nope\r\ngarbage', { contentType: 'multipart/form-data; boundary=zzz' });
    expect([r.status, r.json.code]).toEqual([400, 1200]);
  });
});
