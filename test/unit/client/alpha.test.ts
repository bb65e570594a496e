import { FormData, MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError, RequestValidationError, ResponseShapeError } from '../../../src/client/errors.js';
import { GatewayClient } from '../../../src/client/gateway-client.js';
import { image2video, toFormData } from '../../../src/client/resources/alpha.js';

const BASE = 'http://gw.test';
const PATH = '/alpha/v1/videos/image2video';
const agents: MockAgent[] = [];

function client(validate = true): { client: GatewayClient; pool: ReturnType<MockAgent['get']> } {
  const agent = new MockAgent();
  agent.disableNetConnect();
  agents.push(agent);
  return {
    client: new GatewayClient({ baseUrl: BASE, token: 'sk-test', dispatcher: agent, validate }),
    pool: agent.get(BASE),
  };
}

afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
});

const ok = {
  code: 0,
  message: 'success',
  request_id: 'req-1',
  data: { task_id: 't-1', task_status: 'submitted', created_at: 1, updated_at: 1 },
};

describe('client alpha.image2video', () => {
  it('posts JSON and returns the typed answer', async () => {
    const { client: c, pool } = client();
    let sent: unknown;
    pool.intercept({ path: PATH, method: 'POST' }).reply(
      200,
      (opts) => {
        sent = JSON.parse(opts.body as string);
        return ok;
      },
      { headers: { 'content-type': 'application/json', 'x-gateway-request-id': 'req-1' } },
    );
    const res = await image2video(c, { image: 'https://example.com/a.png', duration: '10' });
    expect(sent).toEqual({ image: 'https://example.com/a.png', duration: '10' });
    expect(res.data.data.task_id).toBe('t-1');
    expect(res.requestId).toBe('req-1');
  });

  it('a 200 answer whose code is not 0 is a GatewayError with the body request id', async () => {
    const { client: c, pool } = client();
    pool.intercept({ path: PATH, method: 'POST' }).reply(
      200,
      { code: 1301, message: 'content safety', request_id: 'req-up' },
      {
        headers: { 'content-type': 'application/json', 'x-gateway-request-id': 'req-gw' },
      },
    );
    const e = await image2video(c, { image: 'https://example.com/a.png' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GatewayError);
    expect(e).toMatchObject({ code: '1301', message: 'content safety', requestId: 'req-up' });
  });

  it('an error status in the alpha envelope maps to a GatewayError too', async () => {
    const { client: c, pool } = client();
    pool.intercept({ path: PATH, method: 'POST' }).reply(
      400,
      { code: 1201, message: 'cfg_scale: bad', request_id: 'req-2' },
      {
        headers: { 'content-type': 'application/json' },
      },
    );
    const e = await image2video(c, { image: 'https://example.com/a.png' }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: '1201', status: 400, requestId: 'req-2' });
  });

  it('a success without data.task_id is a ResponseShapeError, never accepted', async () => {
    const { client: c, pool } = client();
    pool
      .intercept({ path: PATH, method: 'POST' })
      .reply(
        200,
        { code: 0, message: 'success', data: {} },
        { headers: { 'content-type': 'application/json' } },
      );
    const e = await image2video(c, { image: 'https://example.com/a.png' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ResponseShapeError);
  });

  it('validates before sending unless validation is off', async () => {
    const { client: c } = client();
    const e = await image2video(c, { image: 'https://example.com/a.png', cfg_scale: 3 }).catch(
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(RequestValidationError);
    expect(e).toMatchObject({ field: 'cfg_scale' });
    const off = client(false);
    off.pool
      .intercept({ path: PATH, method: 'POST' })
      .reply(
        400,
        { code: 1201, message: 'bad', request_id: 'r' },
        { headers: { 'content-type': 'application/json' } },
      );
    const sent = await image2video(off.client, { image: 'x', cfg_scale: 3 }).catch((x: unknown) => x);
    expect(sent).toBeInstanceOf(GatewayError);
  });

  it('sends an undici FormData body when asked (the wire form is checked against gw sim in e2e)', async () => {
    const { client: c, pool } = client();
    let body: unknown;
    pool.intercept({ path: PATH, method: 'POST' }).reply(
      200,
      (opts) => {
        body = opts.body;
        return ok;
      },
      { headers: { 'content-type': 'application/json' } },
    );
    await image2video(c, { image: 'https://example.com/a.png', cfg_scale: 0.5 }, { multipart: true });
    expect(body).toBeInstanceOf(FormData);
    expect([...(body as FormData).entries()]).toEqual([
      ['image', 'https://example.com/a.png'],
      ['cfg_scale', '0.5'],
    ]);
  });
});

describe('toFormData', () => {
  it('keeps strings, writes numbers as text and JSON-encodes objects and arrays', () => {
    const form = toFormData({
      image: 'AAAA',
      cfg_scale: 0.5,
      camera_control: { type: 'simple', config: { zoom: 5 } },
      voice_list: [{ voice_id: 'v' }],
      skip: undefined,
    });
    expect([...form.entries()]).toEqual([
      ['image', 'AAAA'],
      ['cfg_scale', '0.5'],
      ['camera_control', '{"type":"simple","config":{"zoom":5}}'],
      ['voice_list', '[{"voice_id":"v"}]'],
    ]);
  });
});
