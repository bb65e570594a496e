import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  GatewayError,
  RequestValidationError,
  ResponseShapeError,
  TimeoutError,
} from '../../../src/client/errors.js';
import { GatewayClient } from '../../../src/client/gateway-client.js';
import * as assets from '../../../src/client/resources/beta-assets.js';
import * as tasks from '../../../src/client/resources/beta-tasks.js';
import type { HostResolver } from '../../../src/contract/beta.js';
import { hintOf } from '../../../src/core/error-map.js';
import { fakeClock } from '../../helpers/clock.js';

const BASE = 'http://gw.test';
const agents: MockAgent[] = [];

function client(validate = true): { client: GatewayClient; pool: ReturnType<MockAgent['get']> } {
  const agent = new MockAgent();
  agent.disableNetConnect();
  agents.push(agent);
  return {
    client: new GatewayClient({
      baseUrl: BASE,
      token: 'sk-test',
      dispatcher: agent,
      validate,
      maxRetries: 0,
    }),
    pool: agent.get(BASE),
  };
}

afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
});

const dns: HostResolver = (host) =>
  host === 'hooks.example.com' ? Promise.resolve(['93.184.216.34']) : Promise.resolve(['10.0.0.9']);

describe('client beta tasks', () => {
  it('checks the body, renames CallbackURL, normalises Asset:// and posts it', async () => {
    const { client: c, pool } = client();
    let sent: unknown;
    pool.intercept({ path: tasks.BETA_TASKS_PATH, method: 'POST' }).reply(200, (o) => {
      sent = JSON.parse(o.body as string);
      return { id: 'cgt-1' };
    });
    const warnings: string[] = [];
    const res = await tasks.create(
      c,
      {
        model: 'gamma-video-2-0-260128',
        content: [{ type: 'image_url', image_url: { url: 'Asset://a-1' }, role: 'first_frame' }],
        CallbackURL: 'https://hooks.example.com/cb',
        execution_expires_after: 100,
      },
      { resolve: dns, onWarning: (w) => warnings.push(w) },
    );
    expect(res.data).toEqual({ id: 'cgt-1' });
    expect(sent).toEqual({
      model: 'gamma-video-2-0-260128',
      content: [{ type: 'image_url', image_url: { url: 'asset://a-1' }, role: 'first_frame' }],
      callback_url: 'https://hooks.example.com/cb',
      execution_expires_after: 100,
    });
    expect(warnings[0]).toMatch(/execution_expires_after=100/);
  });

  it('refuses before sending (a host resolving privately), and sends as-is without validation', async () => {
    const { client: c } = client();
    const body = {
      model: 'gamma-video-2-0',
      content: [{ type: 'text', text: 'x' }],
      callback_url: 'https://lan.example/cb',
    };
    await expect(tasks.create(c, body, { resolve: dns })).rejects.toThrow(RequestValidationError);
    const off = client(false);
    let sent: unknown;
    off.pool.intercept({ path: tasks.BETA_TASKS_PATH, method: 'POST' }).reply(400, (o) => {
      sent = JSON.parse(o.body as string);
      return {
        error: {
          code: 'invalid_request',
          message: 'bad callback',
          param: 'callback_url',
          type: 'BadRequest',
        },
      };
    });
    const e = await tasks.create(off.client, { ...body, CallbackURL: 'x' }).catch((x: unknown) => x);
    expect(sent).toHaveProperty('CallbackURL', 'x');
    expect(e).toBeInstanceOf(GatewayError);
    expect(e).toMatchObject({ status: 400, code: 'invalid_request', param: 'callback_url' });
  });

  it('prepareCreate: the prepared body, or a RequestValidationError with field, rule and documented code', async () => {
    const noDns: HostResolver = () => Promise.reject(new Error('no DNS in this test'));
    const body = { model: 'gamma-video-2-0-mini-260615', content: [{ type: 'text', text: 'x' }] };
    expect((await tasks.prepareCreate(body, noDns)).model).toBe('gamma-video-2-0-mini');
    const e = await tasks.prepareCreate({ ...body, duration: 20 }, noDns).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RequestValidationError);
    expect((e as RequestValidationError).message).toMatch(/^duration: must be an integer from 4 to 15/);
    expect(e).toMatchObject({ field: 'duration', param: 'duration', code: 'invalid_duration' });
    expect((e as RequestValidationError).rule).toMatch(/^must be an integer from 4 to 15/);
    // The gateway's catch-all code is reported as a local refusal, like every other rule without its own code.
    const cb = await tasks
      .prepareCreate({ ...body, callback_url: 'https://lan.example/cb' }, dns)
      .catch((x: unknown) => x);
    expect(cb).toMatchObject({ field: 'callback_url', code: 'invalid_input' });
  });

  it('lists with comma-separated task ids and the filters of §4.1', async () => {
    const { client: c, pool } = client();
    pool
      .intercept({
        path: `${tasks.BETA_TASKS_PATH}?page_num=2&page_size=5&filter.status=running&filter.task_ids=a%2Cb`,
        method: 'GET',
      })
      .reply(200, { items: [{ id: 'a', status: 'running' }], total: 6 });
    const r = await tasks.list(c, { page: 2, pageSize: 5, status: 'running', taskIds: ['a', 'b'] });
    expect(r.data.total).toBe(6);
    await expect(tasks.list(c, { status: 'done' })).rejects.toThrow(/filter\.status: must be one of/);
  });

  it('maps the 409 task error body and refuses a record without status', async () => {
    const { client: c, pool } = client();
    pool.intercept({ path: `${tasks.BETA_TASKS_PATH}/cgt-1`, method: 'DELETE' }).reply(409, {
      error: {
        code: 'InvalidAction.RunningTaskDeletion',
        message: 'running',
        param: 'task_id',
        type: 'Conflict',
      },
    });
    const e = await tasks.remove(c, 'cgt-1').catch((x: unknown) => x);
    expect(e).toMatchObject({ status: 409, code: 'InvalidAction.RunningTaskDeletion', type: 'Conflict' });
    expect(hintOf(e as GatewayError)).toMatch(/wait until it ends/);
    pool.intercept({ path: `${tasks.BETA_TASKS_PATH}/cgt-2`, method: 'GET' }).reply(200, { id: 'cgt-2' });
    await expect(tasks.retrieve(c, 'cgt-2')).rejects.toThrow(ResponseShapeError);
  });

  it('waits until a terminal status with an injected sleep', async () => {
    const { client: c, pool } = client();
    const path = `${tasks.BETA_TASKS_PATH}/cgt-3`;
    pool.intercept({ path, method: 'GET' }).reply(200, { id: 'cgt-3', status: 'queued' });
    pool.intercept({ path, method: 'GET' }).reply(200, { id: 'cgt-3', status: 'running' });
    pool.intercept({ path, method: 'GET' }).reply(200, { id: 'cgt-3', status: 'expired' });
    const slept: number[] = [];
    const t = await tasks.wait(c, 'cgt-3', {
      sleep: (ms) => (slept.push(ms), Promise.resolve()),
      random: () => 0.5,
    });
    expect(t.status).toBe('expired');
    expect(slept).toHaveLength(2);
  });

  it('keeps a wait to its limit: a 503 with a long Retry-After is absorbed by the poll, not retried by the client', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    agents.push(agent);
    const clientSleeps: number[] = [];
    const c = new GatewayClient({
      baseUrl: BASE,
      token: 'sk-test',
      dispatcher: agent,
      sleep: (ms) => (clientSleeps.push(ms), Promise.resolve()),
    });
    const path = `${tasks.BETA_TASKS_PATH}/cgt-4`;
    agent
      .get(BASE)
      .intercept({ path, method: 'GET' })
      .reply(
        503,
        { error: { code: 'service_unavailable', message: 'busy' } },
        { headers: { 'retry-after': '30' } },
      )
      .times(5);
    const clock = fakeClock();
    const e = await tasks
      .wait(c, 'cgt-4', {
        timeoutMs: 3000,
        now: clock.now,
        sleep: clock.sleep,
      })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TimeoutError);
    expect(clock.sleeps).toEqual([3000]);
    expect(clientSleeps).toEqual([]);
  });
});

describe('client beta assets', () => {
  const meta = { RequestId: 'r-1', Action: 'GetAsset', Version: '2024-01-01' };
  const q = (action: string) => `/beta/?Action=${action}&Version=2024-01-01`;

  it('posts actions with Version 2024-01-01 and the GroupType AIGC', async () => {
    const { client: c, pool } = client();
    let sent: unknown;
    pool.intercept({ path: q('CreateAssetGroup'), method: 'POST' }).reply(200, (o) => {
      sent = JSON.parse(o.body as string);
      return { ResponseMetadata: { ...meta, Action: 'CreateAssetGroup' }, Result: { Id: 'group-1' } };
    });
    const r = await assets.createGroup(c, { model: 'gamma-video-2-0', Name: 'refs' });
    expect(r.data.Result.Id).toBe('group-1');
    expect(sent).toEqual({ GroupType: 'AIGC', model: 'gamma-video-2-0', Name: 'refs' });
  });

  it('refuses a URL that cannot be publicly downloadable before sending', async () => {
    const { client: c } = client();
    const body = {
      model: 'gamma-video-2-0',
      GroupId: 'g',
      URL: 'https://127.0.0.1/a.png',
      AssetType: 'Image',
      Name: 'a',
    };
    await expect(assets.createAsset(c, body)).rejects.toThrow(/URL: 127\.0\.0\.1 is a loopback address/);
  });

  it('turns ResponseMetadata.Error into a GatewayError, on an error status and even on 200', async () => {
    const { client: c, pool } = client();
    const err = {
      ResponseMetadata: { ...meta, Error: { Code: 'ResourceNotFound.Asset', Message: 'no such asset' } },
    };
    pool.intercept({ path: q('GetAsset'), method: 'POST' }).reply(404, err);
    pool.intercept({ path: q('GetAsset'), method: 'POST' }).reply(200, err);
    for (let i = 0; i < 2; i++) {
      const e = await assets.getAsset(c, { model: 'gamma-video-2-0', Id: 'x' }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(GatewayError);
      expect(e).toMatchObject({ code: 'ResourceNotFound.Asset', message: 'no such asset', requestId: 'r-1' });
    }
  });

  it('polls GetAsset at 2, 5, 10, 20 s then every 20 s until Active or Failed', async () => {
    const { client: c, pool } = client();
    const states = [
      'Processing',
      'Processing',
      'Processing',
      'Processing',
      'Processing',
      'Processing',
      'Failed',
    ];
    for (const Status of states) {
      pool
        .intercept({ path: q('GetAsset'), method: 'POST' })
        .reply(200, { ResponseMetadata: meta, Result: { Id: 'a', Status } });
    }
    const slept: number[] = [];
    const a = await assets.waitAsset(
      c,
      { model: 'gamma-video-2-0', id: 'a' },
      { sleep: (ms) => (slept.push(ms), Promise.resolve()) },
    );
    expect(a.Status).toBe('Failed');
    expect(slept).toEqual([2000, 5000, 10000, 20000, 20000, 20000]);
  });
});
