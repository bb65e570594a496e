import { describe, expect, it } from 'vitest';
import {
  alphaImage2VideoBodySchema,
  alphaImage2VideoRequestSchema,
  alphaImage2VideoResponseSchema,
  base64ImageInfo,
  effectiveModel,
  isBase64,
} from '../../../src/contract/alpha.js';
import { check } from '../../../src/contract/validate.js';
import { makeJpeg, makePng } from '../../helpers/images.js';

const PNG = makePng(64, 36).toString('base64');
const JPEG = makeJpeg(64, 36).toString('base64');
const MASK = makePng(64, 36, 0xff).toString('base64');
const SMALL_MASK = makePng(32, 18, 0xff).toString('base64');
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00', 'latin1').toString('base64');
const URL_IMG = 'https://example.com/first.png';

const pts = (n: number): { x: number; y: number }[] => Array.from({ length: n }, (_, i) => ({ x: i, y: i }));
const group = (n = 2, mask = MASK) => ({ mask, trajectories: pts(n) });

type Case = [name: string, body: Record<string, unknown>];

function body(extra: Record<string, unknown>): Record<string, unknown> {
  return { image: URL_IMG, ...extra };
}

/** Every rule of alpha-image2video.md: a body that honours it. */
const VALID: Case[] = [
  ['minimal body (model_name defaults to alpha-v1)', {}],
  ['model_name from the enum', { model_name: 'alpha-v2-5-turbo' }],
  ['image as a URL', {}],
  ['image as Base64 PNG', { image: PNG }],
  ['image as Base64 JPEG', { image: JPEG }],
  ['image_tail as a URL', { image_tail: 'https://example.com/last.png' }],
  ['image_tail as Base64', { image_tail: PNG }],
  ['prompt and negative_prompt', { prompt: 'a cat', negative_prompt: 'blur' }],
  [
    'voice_list with alpha-v2-6, sound on, 2 entries',
    { model_name: 'alpha-v2-6', sound: 'on', voice_list: [{ voice_id: 'a' }, { voice_id: 'b' }] },
  ],
  ['sound off with alpha-v2-6', { model_name: 'alpha-v2-6', sound: 'off' }],
  ['cfg_scale 0 with the default model', { cfg_scale: 0 }],
  ['cfg_scale 1 with alpha-v1-6', { model_name: 'alpha-v1-6', cfg_scale: 1 }],
  ['cfg_scale 0.5 with alpha-v1-5', { model_name: 'alpha-v1-5', cfg_scale: 0.5 }],
  ['mode pro', { mode: 'pro' }],
  ['static_mask as Base64', { image: PNG, static_mask: MASK }],
  ['static_mask as a URL', { static_mask: 'https://example.com/mask.png' }],
  ['6 dynamic mask groups', { dynamic_masks: Array.from({ length: 6 }, () => group()) }],
  ['77 trajectory points', { dynamic_masks: [group(77)] }],
  ['2 trajectory points', { dynamic_masks: [group(2)] }],
  ['static and dynamic masks together (group b)', { static_mask: MASK, dynamic_masks: [group()] }],
  ['camera_control simple with zoom', { camera_control: { type: 'simple', config: { zoom: 5 } } }],
  ['camera_control without config', { camera_control: { type: 'down_back' } }],
  ['aspect_ratio 9:16', { aspect_ratio: '9:16' }],
  ['duration "10" as a string', { duration: '10' }],
  ['watermark_info object', { watermark_info: { enabled: true } }],
  ['callback_url https', { callback_url: 'https://hooks.example.com/alpha' }],
  ['external_task_id', { external_task_id: 'job-42' }],
  ['additional properties pass (§2.1 free-form object)', { element_list: [{ id: 1 }] }],
  ['mask with the image resolution', { image: PNG, dynamic_masks: [group(3, MASK)] }],
];

/** Every rule: a body that breaks it, the field named, and words of the message (the rule and its section). */
const INVALID: [name: string, body: Record<string, unknown>, field: string, words: string][] = [
  ['model_name outside the enum', { model_name: 'alpha-v3' }, 'model_name', 'must be one of alpha-v1'],
  ['image missing', { image: undefined }, 'image', 'is required (first-frame image'],
  ['image not a string', { image: 42 }, 'image', 'must be a string'],
  ['image neither URL nor Base64', { image: 'not an image!' }, 'image', 'must be an http(s) URL or Base64'],
  ['image with a data: prefix', { image: `data:image/png;base64,${PNG}` }, 'image', 'without a data: prefix'],
  ['image Base64 of a GIF', { image: GIF }, 'image', 'must decode to a PNG or JPEG'],
  ['image_tail neither URL nor Base64', { image_tail: 'file.png' }, 'image_tail', 'URL or Base64'],
  ['prompt not a string', { prompt: 5 }, 'prompt', 'must be a string'],
  ['negative_prompt not a string', { negative_prompt: ['x'] }, 'negative_prompt', 'must be a string'],
  [
    'voice_list with 3 entries',
    { model_name: 'alpha-v2-6', sound: 'on', voice_list: [{}, {}, {}] },
    'voice_list',
    'at most 2 entries',
  ],
  [
    'voice_list with alpha-v2-5',
    { model_name: 'alpha-v2-5', voice_list: [{ voice_id: 'a' }] },
    'voice_list',
    'only allowed with model alpha-v2-6; model_name is alpha-v2-5',
  ],
  [
    'voice_list with the default model',
    { voice_list: [{ voice_id: 'a' }] },
    'voice_list',
    'model_name defaults to alpha-v1',
  ],
  [
    'voice_list without sound',
    { model_name: 'alpha-v2-6', voice_list: [{ voice_id: 'a' }] },
    'voice_list',
    'requires sound = on',
  ],
  [
    'voice_list with sound off',
    { model_name: 'alpha-v2-6', sound: 'off', voice_list: [{ voice_id: 'a' }] },
    'voice_list',
    'requires sound = on',
  ],
  [
    'voice_list entry not an object',
    { model_name: 'alpha-v2-6', sound: 'on', voice_list: ['a'] },
    'voice_list[0]',
    'entries must be objects',
  ],
  ['sound outside on|off', { model_name: 'alpha-v2-6', sound: 'loud' }, 'sound', 'must be one of on, off'],
  [
    'sound with alpha-v1',
    { model_name: 'alpha-v1', sound: 'on' },
    'sound',
    'only allowed with model alpha-v2-6',
  ],
  ['cfg_scale above 1', { cfg_scale: 1.5 }, 'cfg_scale', 'from 0 to 1'],
  ['cfg_scale below 0', { cfg_scale: -0.1 }, 'cfg_scale', 'from 0 to 1'],
  ['cfg_scale as a string', { cfg_scale: '0.5' }, 'cfg_scale', 'must be a number'],
  [
    'cfg_scale with alpha-v2-1',
    { model_name: 'alpha-v2-1', cfg_scale: 0.5 },
    'cfg_scale',
    'only allowed with models alpha-v1, alpha-v1-5, alpha-v1-6; model_name is alpha-v2-1',
  ],
  ['mode outside std|pro', { mode: 'fast' }, 'mode', 'must be one of std, pro'],
  ['static_mask neither URL nor Base64', { static_mask: 'mask%' }, 'static_mask', 'URL or Base64'],
  [
    '7 dynamic mask groups',
    { dynamic_masks: Array.from({ length: 7 }, () => group()) },
    'dynamic_masks',
    'at most 6 groups',
  ],
  [
    'dynamic mask as a URL',
    { dynamic_masks: [{ mask: 'https://example.com/m.png', trajectories: pts(2) }] },
    'dynamic_masks[0].mask',
    'must be Base64',
  ],
  [
    'dynamic mask missing',
    { dynamic_masks: [{ trajectories: pts(2) }] },
    'dynamic_masks[0].mask',
    'is required',
  ],
  ['1 trajectory point', { dynamic_masks: [group(1)] }, 'dynamic_masks[0].trajectories', 'too few points'],
  [
    '78 trajectory points',
    { dynamic_masks: [group(78)] },
    'dynamic_masks[0].trajectories',
    'at most 77 points',
  ],
  [
    'non-integer trajectory point',
    {
      dynamic_masks: [
        {
          mask: MASK,
          trajectories: [
            { x: 1.5, y: 0 },
            { x: 2, y: 2 },
          ],
        },
      ],
    },
    'dynamic_masks[0].trajectories[0].x',
    'must be an integer',
  ],
  [
    'negative trajectory point',
    {
      dynamic_masks: [
        {
          mask: MASK,
          trajectories: [
            { x: 1, y: -1 },
            { x: 2, y: 2 },
          ],
        },
      ],
    },
    'dynamic_masks[0].trajectories[0].y',
    'must be 0 or more',
  ],
  ['dynamic_masks not an array', { dynamic_masks: group() }, 'dynamic_masks', 'must be an array'],
  [
    'camera_control without type',
    { camera_control: { config: { zoom: 1 } } },
    'camera_control.type',
    'is required',
  ],
  [
    'camera_control with an empty type',
    { camera_control: { type: '' } },
    'camera_control.type',
    'must not be empty',
  ],
  [
    'camera_control config value not a number',
    { camera_control: { type: 'simple', config: { zoom: '5' } } },
    'camera_control.config.zoom',
    'must be a number',
  ],
  ['camera_control not an object', { camera_control: 'simple' }, 'camera_control', 'must be an object'],
  [
    'aspect_ratio outside the enum',
    { aspect_ratio: '4:3' },
    'aspect_ratio',
    'must be one of 16:9, 9:16, 1:1',
  ],
  ['duration as a number', { duration: 5 }, 'duration', 'must be the string "5" or "10"'],
  ['duration outside 5|10', { duration: '7' }, 'duration', 'must be the string "5" or "10"'],
  ['watermark_info not an object', { watermark_info: true }, 'watermark_info', 'must be an object'],
  ['callback_url not a URL', { callback_url: 'hooks' }, 'callback_url', 'must be an http(s) URL'],
  ['external_task_id not a string', { external_task_id: 42 }, 'external_task_id', 'must be a string'],
  [
    'image_tail with camera_control',
    { image_tail: URL_IMG, camera_control: { type: 'simple', config: { zoom: 5 } } },
    'camera_control',
    'cannot be combined with image_tail',
  ],
  [
    'image_tail with static_mask',
    { image_tail: URL_IMG, static_mask: MASK },
    'static_mask',
    'mutually exclusive',
  ],
  [
    'image_tail with dynamic_masks',
    { image_tail: URL_IMG, dynamic_masks: [group()] },
    'dynamic_masks',
    'cannot be combined with image_tail',
  ],
  [
    'dynamic_masks with camera_control',
    { dynamic_masks: [group()], camera_control: { type: 'simple' } },
    'camera_control',
    'cannot be combined with dynamic_masks',
  ],
  ['body not an object', [] as unknown as Record<string, unknown>, 'body', 'must be a JSON object'],
];

function parse(schema: typeof alphaImage2VideoBodySchema, b: Record<string, unknown>) {
  return check(schema, Array.isArray(b) ? b : body(b));
}

describe('alpha image2video body: every rule accepts a valid body', () => {
  it.each(VALID)('%s', (_name, b) => {
    const r = parse(alphaImage2VideoRequestSchema, b);
    expect(r.ok ? 'ok' : r.violation).toBe('ok');
  });
});

describe('alpha image2video body: every rule rejects a body that breaks it', () => {
  it.each(INVALID)('%s', (_name, b, field, words) => {
    for (const schema of [alphaImage2VideoBodySchema, alphaImage2VideoRequestSchema]) {
      const r = parse(schema, b);
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.violation.field).toBe(field);
      expect(r.violation.message).toContain(words);
      expect(r.violation.message).not.toMatch(/\.md\b|§/);
    }
  });
});

describe('checks gw adds before sending (request schema only)', () => {
  it('§4 rule 5: a dynamic mask whose resolution differs from the image is refused', () => {
    const b = body({ image: PNG, dynamic_masks: [group(2, SMALL_MASK)] });
    expect(check(alphaImage2VideoBodySchema, b).ok).toBe(true); // the gateway lets the upstream fail
    const r = check(alphaImage2VideoRequestSchema, b);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.violation.field).toBe('dynamic_masks[0].mask');
      expect(r.violation.message).toContain('resolution 32x18 differs from image (64x36)');
      expect(r.violation.message).not.toMatch(/\.md\b|§/);
    }
  });

  it('§4 rule 5: a static mask of another resolution than a JPEG image is refused', () => {
    const r = check(alphaImage2VideoRequestSchema, body({ image: JPEG, static_mask: SMALL_MASK }));
    expect(r.ok ? 'ok' : r.violation.field).toBe('static_mask');
  });

  it('§4 rule 5: masks that disagree with each other are refused even when the image is a URL', () => {
    const r = check(
      alphaImage2VideoRequestSchema,
      body({ static_mask: MASK, dynamic_masks: [group(2, SMALL_MASK)] }),
    );
    expect(r.ok ? 'ok' : r.violation.message).toContain('differs from the first mask');
  });

  it('callback_url must be https for gw, though the gateway document only says "notification address"', () => {
    const b = body({ callback_url: 'http://hooks.example.com/x' });
    expect(check(alphaImage2VideoBodySchema, b).ok).toBe(true);
    const r = check(alphaImage2VideoRequestSchema, b);
    expect(r.ok ? 'ok' : `${r.violation.field}: ${r.violation.message}`).toContain(
      'callback_url: must be an https URL',
    );
  });
});

describe('helpers', () => {
  it('effectiveModel defaults to alpha-v1', () => {
    expect(effectiveModel({})).toBe('alpha-v1');
    expect(effectiveModel({ model_name: 'alpha-v2-6' })).toBe('alpha-v2-6');
  });

  it('isBase64 wants padded standard Base64', () => {
    expect(isBase64(PNG)).toBe(true);
    expect(isBase64('abc')).toBe(false);
    expect(isBase64('ab-_')).toBe(false);
    expect(isBase64('')).toBe(false);
  });

  it('base64ImageInfo reads the dimensions of PNG and JPEG', () => {
    expect(base64ImageInfo(PNG)).toEqual({ type: 'png', width: 64, height: 36 });
    expect(base64ImageInfo(JPEG)).toEqual({ type: 'jpeg', width: 64, height: 36 });
    expect(base64ImageInfo(GIF)).toBeUndefined();
  });

  it('the response schema needs data.task_id and keeps unknown fields', () => {
    const ok = alphaImage2VideoResponseSchema.safeParse({
      code: 0,
      message: 'success',
      request_id: 'r',
      data: { task_id: 't', task_status: 'submitted', created_at: 1, updated_at: 2, task_info: {} },
    });
    expect(ok.success && ok.data.data.task_info).toEqual({});
    expect(alphaImage2VideoResponseSchema.safeParse({ code: 0, data: {} }).success).toBe(false);
  });
});
