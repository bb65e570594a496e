import { describe, expect, it } from 'vitest';
import {
  ASSET_ACTIONS,
  ASSET_POLL_STEPS_MS,
  asksModerationSkip,
  assetCreatedSchema,
  assetSourceUrlProblem,
  createAssetGroupSchema,
  createAssetSchema,
  defaultAssetName,
  getAssetResultSchema,
  getAssetSchema,
  guessAssetType,
  isAssetFinal,
  isForbiddenAssetAction,
  listAssetsResultSchema,
  listAssetsSchema,
} from '../../../src/contract/beta-assets.js';
import { check } from '../../../src/contract/validate.js';
import type { z } from 'zod';

function violation(schema: z.ZodType, body: unknown) {
  const r = check(schema, body);
  if (r.ok) throw new Error(`expected a violation for ${JSON.stringify(body)}`);
  return r.violation;
}

const M = { model: 'gamma-video-2-0' };

describe('beta §4.2 CreateAssetGroup', () => {
  it('accepts model, Name, GroupType AIGC, Description', () => {
    expect(
      check(createAssetGroupSchema, { ...M, Name: 'refs', GroupType: 'AIGC', Description: 'd' }).ok,
    ).toBe(true);
    expect(
      check(createAssetGroupSchema, { model: 'gamma-video-2-0-fast-260128', Name: 'refs', GroupType: 'AIGC' })
        .ok,
    ).toBe(true);
  });
  it.each([
    [{ Name: 'x', GroupType: 'AIGC' }, 'model', /model is required/],
    [{ ...M, Name: 'x', GroupType: 'AIGC', model: 'gv2' }, 'model', /aliases are refused/],
    [{ ...M, GroupType: 'AIGC' }, 'Name', /Name is required/],
    [{ ...M, Name: '  ', GroupType: 'AIGC' }, 'Name', /must not be empty/],
    [{ ...M, Name: 'x' }, 'GroupType', /GroupType must be AIGC/],
    [{ ...M, Name: 'x', GroupType: 'Other' }, 'GroupType', /GroupType must be AIGC/],
    [{ ...M, Name: 'x', GroupType: 'AIGC', Description: 3 }, 'Description', /must be a string/],
  ])('refuses %j at %s', (body, field, msg) => {
    const v = violation(createAssetGroupSchema, body);
    expect(v.field).toBe(field);
    expect(v.message).toMatch(msg);
  });
});

describe('beta §4.2 CreateAsset', () => {
  const ok = {
    ...M,
    GroupId: 'group-1',
    URL: 'https://cdn.example.com/cat.png',
    AssetType: 'Image',
    Name: 'cat',
  };
  it('accepts the documented body', () => {
    expect(check(createAssetSchema, ok).ok).toBe(true);
  });
  it.each(['Url', 'url'])('accepts %s and forwards it as URL', (key) => {
    const { URL: u, ...rest } = ok;
    const r = check(createAssetSchema, { ...rest, [key]: u });
    expect(r.ok && r.value).toMatchObject({ URL: u });
    expect(r.ok && key in r.value).toBe(false);
  });
  it('URL wins over Url/url', () => {
    const r = check(createAssetSchema, { ...ok, url: 'https://other.example/x.png' });
    expect(r.ok && r.value.URL).toBe(ok.URL);
  });
  it.each([
    [{ ...ok, GroupId: undefined }, 'GroupId', /GroupId is required/],
    [{ ...ok, URL: undefined }, 'URL', /URL is required/],
    [{ ...ok, AssetType: 'Picture' }, 'AssetType', /Image, Video, Audio/],
    [{ ...ok, AssetType: 'image' }, 'AssetType', /Image, Video, Audio/],
    [{ ...ok, Name: '' }, 'Name', /must not be empty/],
    [{ ...ok, model: 'gamma-video-2-0-filter-off-260128' }, 'model', /version suffix/],
  ])('refuses %j at %s', (body, field, msg) => {
    const v = violation(createAssetSchema, body);
    expect(v.field).toBe(field);
    expect(v.message).toMatch(msg);
  });
  it('refuses Moderation.Strategy=Skip with moderation_skip_not_allowed', () => {
    const v = violation(createAssetSchema, { ...ok, Moderation: { Strategy: 'Skip' } });
    expect(v).toMatchObject({ field: 'Moderation.Strategy', code: 'moderation_skip_not_allowed' });
    expect(check(createAssetSchema, { ...ok, Moderation: { Strategy: 'Default' } }).ok).toBe(true);
    expect(asksModerationSkip({ Moderation: { Strategy: 'skip' } })).toBe(true);
    expect(asksModerationSkip({})).toBe(false);
  });
});

describe('beta §4.2 GetAsset and ListAssets', () => {
  it('GetAsset takes model and Id', () => {
    expect(check(getAssetSchema, { ...M, Id: 'asset-1' }).ok).toBe(true);
    expect(violation(getAssetSchema, M).field).toBe('Id');
  });
  it('ListAssets: GroupType must be AIGC, GroupIds strings, PageNumber >= 1', () => {
    const ok = { ...M, Filter: { GroupType: 'AIGC', GroupIds: ['group-1'] }, PageNumber: 1, PageSize: 20 };
    expect(check(listAssetsSchema, ok).ok).toBe(true);
    expect(violation(listAssetsSchema, { ...ok, Filter: { GroupIds: [] } }).field).toBe('Filter.GroupType');
    expect(violation(listAssetsSchema, { ...ok, Filter: { GroupType: 'X' } }).message).toMatch(
      /must be AIGC/,
    );
    expect(
      violation(listAssetsSchema, { ...ok, Filter: { GroupType: 'AIGC', GroupIds: 'g' } }).message,
    ).toMatch(/array/);
    expect(violation(listAssetsSchema, { ...ok, Filter: { GroupType: 'AIGC', GroupIds: [1] } }).field).toBe(
      'Filter.GroupIds[0]',
    );
    expect(violation(listAssetsSchema, { ...ok, PageNumber: 0 }).message).toMatch(/>= 1/);
    expect(violation(listAssetsSchema, { ...ok, PageSize: 0 }).field).toBe('PageSize');
    expect(violation(listAssetsSchema, { ...M }).message).toMatch(/Filter is required/);
  });
});

describe('beta §4.2/§3 actions, states, polling', () => {
  it('offers four actions; Update*/Delete* are forbidden', () => {
    expect(ASSET_ACTIONS).toEqual(['CreateAssetGroup', 'CreateAsset', 'GetAsset', 'ListAssets']);
    for (const a of ['UpdateAsset', 'DeleteAsset', 'DeleteAssetGroup', 'UpdateAssetGroup'])
      expect(isForbiddenAssetAction(a)).toBe(true);
    for (const a of ASSET_ACTIONS) expect(isForbiddenAssetAction(a)).toBe(false);
  });
  it('Active and Failed are final', () => {
    expect(isAssetFinal('Active')).toBe(true);
    expect(isAssetFinal('Failed')).toBe(true);
    expect(isAssetFinal('Processing')).toBe(false);
  });
  it('polls at 2, 5, 10, 20 s', () => {
    expect(ASSET_POLL_STEPS_MS).toEqual([2000, 5000, 10000, 20000]);
  });
});

describe('asset source URLs (§2.6 publicly downloadable)', () => {
  it.each([
    ['http://cdn.example.com/a.png', /must use https/],
    ['ftp://cdn.example.com/a.png', /must use https/],
    ['https://user:pw@cdn.example.com/a.png', /credentials/],
    ['https://localhost/a.png', /loopback/],
    ['https://127.0.0.1/a.png', /loopback/],
    ['https://10.0.0.2/a.png', /private/],
    ['https://192.168.0.10/a.png', /private/],
    ['https://169.254.1.1/a.png', /link-local/],
    ['https://[::1]/a.png', /loopback/],
    ['https://nas.local/a.png', /not a public host name/],
    ['https://intranet/a.png', /not a public host name/],
    ['not a url', /not a URL/],
  ])('refuses %s', (url, msg) => {
    expect(assetSourceUrlProblem(url)).toMatch(msg);
  });
  it.each(['https://cdn.example.com/a.png', 'https://93.184.216.34/x.mp4', 'https://[2606:4700::1]/a.wav'])(
    'accepts %s',
    (url) => {
      expect(assetSourceUrlProblem(url)).toBeUndefined();
    },
  );
});

describe('asset type guess and names', () => {
  it.each([
    ['https://x.example/a.PNG', 'Image'],
    ['https://x.example/a.jpeg?sig=1', 'Image'],
    ['https://x.example/clip.mp4', 'Video'],
    ['https://x.example/clip.mov', 'Video'],
    ['https://x.example/voice.mp3', 'Audio'],
    ['https://x.example/voice.wav', 'Audio'],
    ['https://x.example/file', undefined],
  ])('%s → %s', (url, type) => {
    expect(guessAssetType(url)).toBe(type);
  });
  it('names an asset after the file', () => {
    expect(defaultAssetName('https://x.example/refs/red%20cat.png')).toBe('red cat');
    expect(defaultAssetName('https://x.example/')).toBe('asset');
  });
});

describe('asset answers', () => {
  const meta = {
    RequestId: 'r',
    Action: 'CreateAsset',
    Version: '2024-01-01',
    Service: 'ark',
    Region: 'ap-southeast-1',
  };
  it('reads the envelopes tolerantly', () => {
    expect(assetCreatedSchema.parse({ ResponseMetadata: meta, Result: { Id: 'asset-1' } }).Result.Id).toBe(
      'asset-1',
    );
    expect(
      getAssetResultSchema.parse({ ResponseMetadata: meta, Result: { Id: 'a', Status: 'Active', Name: 'n' } })
        .Result,
    ).toMatchObject({ Name: 'n' });
    const l = listAssetsResultSchema.parse({
      ResponseMetadata: meta,
      Result: {
        Items: [{ Id: 'a', GroupId: 'g', AssetType: 'Image', Status: 'Processing' }],
        TotalCount: 1,
        PageNumber: 1,
        PageSize: 10,
      },
    });
    expect(l.Result.TotalCount).toBe(1);
    expect(assetCreatedSchema.safeParse({ ResponseMetadata: meta, Result: {} }).success).toBe(false);
  });
});
