import { describe, expect, it } from 'vitest';
import {
  BETA_4K_SIZES,
  BETA_SKU_PRICES,
  betaTaskCreateSchema,
  betaTaskListQuerySchema,
  betaTaskSchema,
  betaTaskListSchema,
  callbackUrlProblem,
  checkBetaTaskCreate,
  hostProblem,
  isBetaSuccess,
  isBetaTerminal,
  nonPublicAddressReason,
  normalizeAssetUrl,
  normalizeBetaModel,
  betaQuoteLines,
  quoteBetaTask,
  renameCallbackUrl,
  skuCandidates,
  skuFor,
  toAssetRef,
  type HostResolver,
} from '../../../src/contract/beta.js';
import { check } from '../../../src/contract/validate.js';

const text = (t = 'a cat surfing') => ({ type: 'text', text: t });
const img = (role?: string, url = 'asset://asset-1') => ({
  type: 'image_url',
  image_url: { url },
  ...(role ? { role } : {}),
});
const vid = (url = 'asset://asset-v') => ({ type: 'video_url', video_url: { url }, role: 'reference_video' });
const aud = (url = 'asset://asset-a') => ({ type: 'audio_url', audio_url: { url }, role: 'reference_audio' });
const base = (extra: Record<string, unknown> = {}) => ({
  model: 'gamma-video-2-0',
  content: [text()],
  ...extra,
});

/** A resolver that never touches the network. */
const fakeDns =
  (table: Record<string, string[]>): HostResolver =>
  (host) => {
    const a = table[host];
    if (a === undefined) return Promise.reject(Object.assign(new Error('nx'), { code: 'ENOTFOUND' }));
    return Promise.resolve(a);
  };
const noDns: HostResolver = () => Promise.reject(new Error('DNS must not be used here'));

function violation(body: unknown) {
  const r = check(betaTaskCreateSchema, body);
  if (r.ok) throw new Error(`expected a violation for ${JSON.stringify(body)}`);
  return r.violation;
}

describe('beta §2.1 model names', () => {
  it.each([
    ['gamma-video-2-0', 'gamma-video-2-0'],
    ['gamma-video-2-0-fast', 'gamma-video-2-0-fast'],
    ['gamma-video-2-0-mini', 'gamma-video-2-0-mini'],
    ['gamma-video-2-0-filter-off', 'gamma-video-2-0-filter-off'],
    ['gamma-video-2-0-fast-filter-off', 'gamma-video-2-0-fast-filter-off'],
    ['gamma-video-2-0-260128', 'gamma-video-2-0'],
    ['gamma-video-2-0-fast-260128', 'gamma-video-2-0-fast'],
    ['gamma-video-2-0-mini-260615', 'gamma-video-2-0-mini'],
  ])('accepts %s as %s', (name, pub) => {
    expect(normalizeBetaModel(name)).toEqual({ ok: true, model: pub });
    expect(check(betaTaskCreateSchema, base({ model: name })).ok).toBe(true);
  });

  it.each([
    'gamma-video-2-0-filter-off-260128',
    '260128-gamma-video-2-0-filter-off',
    'gamma-video-2-0-260128-filter-off',
    'gamma-video-2-0-fast-filter-off-v2',
  ])('refuses the suffixed filter-off name %s', (name) => {
    const v = violation(base({ model: name }));
    expect(v.field).toBe('model');
    expect(v.message).toMatch(/filter-off models take no version suffix/);
  });

  it.each(['gv2', 'gamma-video-2', 'seedance-2.0', 'gamma-video-2-0-mini-260128', 'Gamma-Video-2-0', ''])(
    'refuses the alias or short id %j',
    (name) => {
      const v = violation(base({ model: name }));
      expect(v.field).toBe('model');
      expect(v.message).toMatch(/short ids and aliases are refused/);
      expect(v.code).toBe('model_not_found');
    },
  );

  it('requires model', () => {
    expect(violation({ content: [text()] }).message).toMatch(/model is required/);
  });
});

describe('beta §2.4 content', () => {
  it('accepts every type with its roles', () => {
    for (const c of [
      [text(), img('first_frame')],
      [img('last_frame')],
      [img('reference_image'), text()],
      [img()],
      [text(), vid()],
      [text(), vid(), img('reference_image')],
      [text(), vid(), aud()],
      [text(), vid(), vid()],
      [text(), vid(), vid(), vid()],
      [aud()],
    ]) {
      expect(check(betaTaskCreateSchema, base({ content: c })).ok).toBe(true);
    }
  });

  it.each([
    [
      { type: 'image_url', image_url: { url: 'asset://a' }, role: 'reference_video' },
      'content[0].role',
      /first_frame, last_frame, reference_image/,
    ],
    [
      { type: 'video_url', video_url: { url: 'asset://a' }, role: 'first_frame' },
      'content[0].role',
      /reference_video/,
    ],
    [
      { type: 'audio_url', audio_url: { url: 'asset://a' }, role: 'reference_image' },
      'content[0].role',
      /reference_audio/,
    ],
    [{ type: 'text', text: 'x', role: 'first_frame' }, 'content[0].role', /text items take no role/],
    [{ type: 'text' }, 'content[0].text', /string "text"/],
    [{ type: 'picture', url: 'asset://a' }, 'content[0].type', /text, image_url, video_url or audio_url/],
    [{ type: 'image_url', image_url: 'asset://a' }, 'content[0].image_url', /object \{url\}/],
    [
      { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      'content[0].image_url.url',
      /asset:\/\/<Asset_Id>/,
    ],
    [{ type: 'video_url', video_url: { url: 'ASSET://a' } }, 'content[0].video_url.url', /asset:\/\//],
    [{ type: 'audio_url', audio_url: { url: 'asset://' } }, 'content[0].audio_url.url', /asset:\/\//],
  ])('refuses %j at %s', (item, field, msg) => {
    const v = violation(base({ content: [item] }));
    expect(v.field).toBe(field);
    expect(v.message).toMatch(msg);
    expect(v.message).not.toMatch(/\.md\b|§/);
  });

  it('normalises Asset:// to asset://', () => {
    const r = check(betaTaskCreateSchema, base({ content: [text(), img('first_frame', 'Asset://asset-9')] }));
    expect(r.ok && r.value.content[1]).toEqual({
      type: 'image_url',
      image_url: { url: 'asset://asset-9' },
      role: 'first_frame',
    });
    expect(normalizeAssetUrl('Asset://x')).toBe('asset://x');
    expect(normalizeAssetUrl('asset://x')).toBe('asset://x');
  });

  it('turns CLI <asset> values into references', () => {
    expect(toAssetRef('asset-1')).toBe('asset://asset-1');
    expect(toAssetRef('Asset://asset-1')).toBe('asset://asset-1');
    expect(toAssetRef('asset://asset-1')).toBe('asset://asset-1');
    expect(toAssetRef('https://x.example/a.png')).toBe('https://x.example/a.png');
  });

  it('requires content with at least a prompt text or a reference', () => {
    expect(violation({ model: 'gamma-video-2-0' }).message).toMatch(/content is required/);
    for (const content of [[], [text('')], [text('   ')]]) {
      const v = violation(base({ content }));
      expect(v.field).toBe('content');
      expect(v.message).toMatch(/at least a prompt text or a reference asset/);
    }
    expect(violation(base({ content: 'a cat' })).message).toMatch(/content is required/);
  });

  it('takes at most 3 reference videos (a join takes 2 to 3)', () => {
    const v = violation(base({ content: [text(), vid(), vid(), vid(), vid()] }));
    expect(v.field).toBe('content');
    expect(v.message).toMatch(/4 video_url items; at most 3 reference videos/);
  });
});

describe('beta §2.4 scalar fields', () => {
  it.each([4, 5, 15, -1])('accepts duration %d', (d) => {
    expect(check(betaTaskCreateSchema, base({ duration: d })).ok).toBe(true);
  });
  it.each([3, 16, 0, -2, 5.5, '5', null])('refuses duration %j with invalid_duration', (d) => {
    const v = violation(base({ duration: d }));
    expect(v).toMatchObject({ field: 'duration', code: 'invalid_duration' });
    expect(v.message).toMatch(/integer from 4 to 15, or -1/);
  });

  it('checks ratio and resolution enums', () => {
    for (const ratio of ['adaptive', '16:9', '9:16', '1:1', '4:3', '3:4', '21:9']) {
      expect(check(betaTaskCreateSchema, base({ ratio })).ok).toBe(true);
    }
    expect(violation(base({ ratio: '2:1' }))).toMatchObject({ field: 'ratio' });
    expect(violation(base({ ratio: '2:1' })).message).toMatch(/adaptive, 16:9/);
    expect(violation(base({ resolution: '2160p' })).message).toMatch(/480p, 720p, 1080p, 4k/);
  });

  it('allows 4k only on the standard model and its filter-off twin', () => {
    expect(check(betaTaskCreateSchema, base({ resolution: '4k' })).ok).toBe(true);
    expect(
      check(betaTaskCreateSchema, base({ model: 'gamma-video-2-0-filter-off', resolution: '4k' })).ok,
    ).toBe(true);
    expect(
      check(betaTaskCreateSchema, base({ model: 'gamma-video-2-0-260128', resolution: '1080p' })).ok,
    ).toBe(true);
    for (const model of [
      'gamma-video-2-0-fast',
      'gamma-video-2-0-mini',
      'gamma-video-2-0-fast-filter-off',
      'gamma-video-2-0-mini-260615',
    ]) {
      const v = violation(base({ model, resolution: '4k' }));
      expect(v.field).toBe('resolution');
      expect(v.message).toMatch(/4k is offered only on gamma-video-2-0/);
    }
  });

  it('limits fast and mini to 480p and 720p', () => {
    for (const model of [
      'gamma-video-2-0-fast',
      'gamma-video-2-0-mini',
      'gamma-video-2-0-fast-filter-off',
      'gamma-video-2-0-fast-260128',
    ]) {
      expect(check(betaTaskCreateSchema, base({ model, resolution: '480p' })).ok).toBe(true);
      expect(check(betaTaskCreateSchema, base({ model, resolution: '720p' })).ok).toBe(true);
      const v = violation(base({ model, resolution: '1080p' }));
      expect(v.field).toBe('resolution');
      expect(v.message).toMatch(/offers only 480p and 720p/);
    }
  });

  it('applies the four mini rejections (and not to the others)', () => {
    const mini = { model: 'gamma-video-2-0-mini' };
    expect(violation(base({ ...mini, references: { audio: ['asset://a'] } }))).toMatchObject({
      field: 'references.audio',
    });
    const a = violation(base({ ...mini, content: [text(), aud()] }));
    expect(a.field).toBe('content[1].type');
    expect(a.message).toMatch(/no audio_url items/);
    expect(violation(base({ ...mini, service_tier: 'flex' }))).toMatchObject({ field: 'service_tier' });
    expect(violation(base({ ...mini, draft: true }))).toMatchObject({ field: 'draft' });
    expect(check(betaTaskCreateSchema, base({ ...mini, draft: false, service_tier: 'default' })).ok).toBe(
      true,
    );
    expect(
      check(
        betaTaskCreateSchema,
        base({
          model: 'gamma-video-2-0-fast',
          draft: true,
          service_tier: 'flex',
          references: { audio: [] },
          content: [text(), aud()],
        }),
      ).ok,
    ).toBe(true);
  });

  it.each([0, 9, 5])('accepts priority %d', (p) =>
    expect(check(betaTaskCreateSchema, base({ priority: p })).ok).toBe(true),
  );
  it.each([-1, 10, 1.5, '3'])('refuses priority %j', (p) => {
    const v = violation(base({ priority: p }));
    expect(v.field).toBe('priority');
    expect(v.message).toMatch(/integer from 0 to 9/);
  });

  it('checks booleans and strings', () => {
    for (const f of ['generate_audio', 'watermark', 'return_last_frame', 'draft']) {
      const v = violation(base({ [f]: 'yes' }));
      expect(v.field).toBe(f);
      expect(v.message).toMatch(/true or false/);
    }
    expect(violation(base({ safety_identifier: 5 })).field).toBe('safety_identifier');
    expect(violation(base({ service_tier: 5 })).field).toBe('service_tier');
  });

  it('execution_expires_after: an integer; outside 3600..259200 only warns', async () => {
    expect(violation(base({ execution_expires_after: 10.5 })).field).toBe('execution_expires_after');
    expect(violation(base({ execution_expires_after: 0 })).message).toMatch(/positive integer/);
    const ok = await checkBetaTaskCreate(base({ execution_expires_after: 7200 }), noDns);
    expect(ok.ok && ok.value.warnings).toEqual([]);
    const warn = await checkBetaTaskCreate(base({ execution_expires_after: 60 }), noDns);
    expect(warn.ok && warn.value.warnings[0]).toMatch(/outside the usual upstream range 3600 to 259200/);
  });

  it('lets unknown native fields through (e.g. seed)', () => {
    const r = check(betaTaskCreateSchema, base({ seed: 42, camera_fixed: true }));
    expect(r.ok && r.value).toMatchObject({ seed: 42, camera_fixed: true });
  });

  it('refuses a body that is not an object', () => {
    expect(violation([]).message).toMatch(/JSON object/);
  });
});

describe('beta §6 callback_url', () => {
  it('renames CallbackURL; callback_url wins when both are given', () => {
    expect(renameCallbackUrl({ CallbackURL: 'https://a.example' })).toEqual({
      callback_url: 'https://a.example',
    });
    expect(renameCallbackUrl({ CallbackURL: 'x', callback_url: 'https://b.example' })).toEqual({
      callback_url: 'https://b.example',
    });
    const r = check(betaTaskCreateSchema, base({ CallbackURL: 'https://93.184.216.34/cb' }));
    expect(r.ok && r.value).toMatchObject({ callback_url: 'https://93.184.216.34/cb' });
    expect(r.ok && 'CallbackURL' in r.value).toBe(false);
    // the losing alias is not forwarded, so it is not checked either
    expect(
      check(
        betaTaskCreateSchema,
        base({ CallbackURL: 'http://127.0.0.1', callback_url: 'https://8.8.8.8/x' }),
      ).ok,
    ).toBe(true);
  });

  it.each([
    ['', /non-empty|not be empty/],
    ['   ', /not be empty after trimming/],
    [42, /must be a string/],
    ['not a url', /not a URL/],
    ['http://93.184.216.34/cb', /must use https, not http/],
    ['https://127.0.0.1/cb', /loopback/],
    ['https://localhost/cb', /loopback name/],
    ['https://api.localhost/cb', /loopback name/],
    ['https://10.1.2.3/cb', /private/],
    ['https://172.16.0.1/cb', /private/],
    ['https://192.168.1.1/cb', /private/],
    ['https://169.254.169.254/latest', /link-local/],
    ['https://224.0.0.1/cb', /multicast/],
    ['https://100.64.0.1/cb', /carrier-grade NAT/],
    ['https://0.0.0.0/cb', /unspecified/],
    ['https://[::1]/cb', /loopback/],
    ['https://[fe80::1]/cb', /link-local/],
    ['https://[fd00::1]/cb', /private/],
    ['https://[ff02::1]/cb', /multicast/],
    ['https://[::ffff:10.0.0.1]/cb', /private/],
    ['https://2130706433/cb', /loopback/],
  ])('refuses %j', (url, msg) => {
    const v = violation(base({ callback_url: url }));
    expect(v.field).toBe('callback_url');
    expect(v.message).toMatch(msg);
    expect(v.code).toBe('invalid_request');
  });

  it('accepts a public IP literal without DNS and trims it', async () => {
    const p = await checkBetaTaskCreate(base({ callback_url: '  https://93.184.216.34/cb  ' }), noDns);
    expect(p.ok && p.value.body.callback_url).toBe('https://93.184.216.34/cb');
    expect(await callbackUrlProblem('https://[2606:4700:4700::1111]/x', noDns)).toBeUndefined();
  });

  it('resolves names with the injected resolver: every address must be public', async () => {
    const dns = fakeDns({
      'hooks.example.com': ['93.184.216.34'],
      'internal.example.com': ['10.0.0.5'],
      'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
      'empty.example.com': [],
    });
    expect(await callbackUrlProblem('https://hooks.example.com/cb', dns)).toBeUndefined();
    expect(await callbackUrlProblem('https://internal.example.com/cb', dns)).toMatch(
      /resolves to 10\.0\.0\.5, a private address/,
    );
    expect(await callbackUrlProblem('https://mixed.example.com/cb', dns)).toMatch(/127\.0\.0\.1, a loopback/);
    expect(await callbackUrlProblem('https://empty.example.com/cb', dns)).toMatch(/does not resolve/);
    expect(await callbackUrlProblem('https://nx.example.com/cb', dns)).toMatch(
      /does not resolve \(ENOTFOUND\)/,
    );
    const r = await checkBetaTaskCreate(base({ callback_url: 'https://internal.example.com/cb' }), dns);
    expect(r.ok === false && r.violation).toMatchObject({ field: 'callback_url', code: 'invalid_request' });
  });

  it('judges addresses with ipaddr.js ranges', async () => {
    expect(nonPublicAddressReason('8.8.8.8')).toBeUndefined();
    expect(nonPublicAddressReason('255.255.255.255')).toMatch(/broadcast/);
    expect(nonPublicAddressReason('240.0.0.1')).toMatch(/reserved/);
    expect(await hostProblem('LOCALHOST', noDns)).toMatch(/loopback/);
  });
});

describe('checkBetaTaskCreate', () => {
  it('returns the violation (field, rule, documented code); it throws nothing', async () => {
    const r = await checkBetaTaskCreate(base({ duration: 20 }), noDns);
    expect(r.ok).toBe(false);
    const v = !r.ok ? r.violation : undefined;
    expect(v?.message).toMatch(/^must be an integer from 4 to 15/);
    expect(v).toMatchObject({ field: 'duration', code: 'invalid_duration' });
  });
  it('returns the public model for a dated name', async () => {
    const r = await checkBetaTaskCreate(base({ model: 'gamma-video-2-0-mini-260615' }), noDns);
    expect(r.ok && r.value.model).toBe('gamma-video-2-0-mini');
  });
});

describe('beta §2.2 and §2.3 tables', () => {
  it('has the 4k sizes', () => {
    expect(BETA_4K_SIZES).toEqual({
      '16:9': '3840x2160',
      '9:16': '2160x3840',
      '1:1': '2880x2880',
      '4:3': '3326x2494',
      '3:4': '2494x3326',
      '21:9': '4398x1886',
    });
  });

  it('has the twelve SKUs', () => {
    expect(Object.keys(BETA_SKU_PRICES)).toHaveLength(12);
    expect(BETA_SKU_PRICES['gamma-video-2-0-1080p-novideo']).toBe(7.7);
    expect(BETA_SKU_PRICES['gamma-video-2-0-mini-video']).toBe(2.1);
  });

  it.each([
    [
      { model: 'gamma-video-2-0', resolution: '720p', content: [text()] },
      'gamma-video-2-0-720p-novideo',
      7.0,
    ],
    [
      { model: 'gamma-video-2-0', resolution: '720p', content: [text(), vid()] },
      'gamma-video-2-0-720p-video',
      4.3,
    ],
    [
      { model: 'gamma-video-2-0', resolution: '1080p', content: [text(), img()] },
      'gamma-video-2-0-1080p-novideo',
      7.7,
    ],
    [
      { model: 'gamma-video-2-0', resolution: '4k', content: [text(), vid()] },
      'gamma-video-2-0-4k-video',
      2.4,
    ],
    [
      { model: 'gamma-video-2-0', resolution: '480p', content: [text()] },
      'gamma-video-2-0-480p-novideo',
      7.0,
    ],
    [
      { model: 'gamma-video-2-0-fast', resolution: '480p', content: [text()] },
      'gamma-video-2-0-fast-novideo',
      5.6,
    ],
    [{ model: 'gamma-video-2-0-fast', content: [text(), vid()] }, 'gamma-video-2-0-fast-video', 3.3],
    [
      { model: 'gamma-video-2-0-mini', resolution: '720p', content: [img()] },
      'gamma-video-2-0-mini-novideo',
      3.5,
    ],
    [{ model: 'gamma-video-2-0-mini-260615', content: [vid()] }, 'gamma-video-2-0-mini-video', 2.1],
    [
      { model: 'gamma-video-2-0-filter-off', resolution: '1080p', content: [vid()] },
      'gamma-video-2-0-1080p-video',
      4.7,
    ],
    [{ model: 'gamma-video-2-0-fast-filter-off', content: [text()] }, 'gamma-video-2-0-fast-novideo', 5.6],
  ])('skuFor(%j) = %s', (body, sku, price) => {
    expect(skuFor(body)).toMatchObject({ sku, price });
  });

  it('keeps the filter-off public name for logs', () => {
    expect(skuFor({ model: 'gamma-video-2-0-filter-off', resolution: '720p', content: [] })?.model).toBe(
      'gamma-video-2-0-filter-off',
    );
  });

  it('lists candidates when the standard resolution is left to the service', () => {
    expect(skuFor({ model: 'gamma-video-2-0', content: [text()] })).toBeUndefined();
    expect(skuCandidates({ model: 'gamma-video-2-0', content: [text()] }).map((c) => c.sku)).toEqual([
      'gamma-video-2-0-480p-novideo',
      'gamma-video-2-0-720p-novideo',
      'gamma-video-2-0-1080p-novideo',
    ]);
  });
});

describe('quoteBetaTask (--dry-run)', () => {
  it('names the SKU, its price, the 4k size and the filter-off billing rule', () => {
    const q = quoteBetaTask({
      model: 'gamma-video-2-0-filter-off',
      resolution: '4k',
      ratio: '9:16',
      content: [text(), vid()],
    });
    expect(q.sku?.sku).toBe('gamma-video-2-0-4k-video');
    expect(q.size).toBe('2160x3840');
    expect(betaQuoteLines(q)).toEqual([
      'sku: gamma-video-2-0-4k-video',
      'price: 2.4 USD per million tokens (has a video reference)',
      'billing: reuses the price of its normal counterpart; logs keep gamma-video-2-0-filter-off',
      'size: 2160x3840, 10-bit H.265',
    ]);
  });
  it('lists the candidates when the resolution is open, and says when the model is unknown', () => {
    expect(betaQuoteLines(quoteBetaTask({ model: 'gamma-video-2-0', content: [text()] }))).toHaveLength(4);
    expect(betaQuoteLines(quoteBetaTask({ model: 'gv2' }))).toEqual([
      'sku: unknown (the model is not one of the documented models)',
    ]);
  });
});

describe('beta §3 statuses and answers', () => {
  it('knows terminal and successful statuses', () => {
    for (const s of ['succeeded', 'failed', 'expired', 'cancelled']) expect(isBetaTerminal(s)).toBe(true);
    for (const s of ['queued', 'running']) expect(isBetaTerminal(s)).toBe(false);
    expect(isBetaSuccess('succeeded')).toBe(true);
    expect(isBetaSuccess('failed')).toBe(false);
  });

  it('reads task records and lists tolerantly', () => {
    const rec = {
      id: 'cgt-1',
      model: 'gamma-video-2-0',
      status: 'succeeded',
      content: { video_url: 'https://cdn/x.mp4' },
      extra: 1,
    };
    expect(betaTaskSchema.parse(rec)).toMatchObject({ extra: 1 });
    expect(betaTaskListSchema.parse({ items: [rec], total: 1 }).total).toBe(1);
    expect(betaTaskSchema.safeParse({ status: 'queued' }).success).toBe(false);
  });

  it('checks list queries', () => {
    expect(
      check(betaTaskListQuerySchema, { page_num: 1, page_size: 20, 'filter.status': 'running' }).ok,
    ).toBe(true);
    const p = check(betaTaskListQuerySchema, { page_num: 0 });
    expect(p.ok === false && p.violation.message).toMatch(/>= 1/);
    const s = check(betaTaskListQuerySchema, { 'filter.status': 'done' });
    expect(s.ok === false && s.violation.message).toMatch(/queued, running, succeeded/);
    const m = check(betaTaskListQuerySchema, { 'filter.model': 'gv2' });
    expect(m.ok === false && m.violation.field).toBe('filter.model');
  });
});
