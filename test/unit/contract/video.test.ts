import { describe, expect, it } from 'vitest';
import { VIDEO_MODELS } from '../../../src/contract/catalog.js';
import { check } from '../../../src/contract/validate.js';
import {
  VIDEO_REFERENCE_RULES,
  isVideoFailure,
  isVideoRunning,
  isVideoSuccess,
  isVideoTerminal,
  referenceItems,
  videoCreateSchema,
  videoCreateWarnings,
  videoError,
  videoExpiresAt,
  videoListPrice,
  videoRecordSchema,
  videoResultUrl,
} from '../../../src/contract/video.js';

const IMG = 'https://example.com/a.png';
const IMG2 = 'https://example.com/b.jpg';
const VID = 'https://example.com/clip.mp4';
const MOV = 'https://example.com/clip.MOV?sig=1';

function ok(body: unknown): void {
  const r = check(videoCreateSchema, body);
  expect(r.ok ? 'ok' : `${r.violation.field}: ${r.violation.message}`).toBe('ok');
}
function bad(body: unknown, field: string, code?: string): void {
  const r = check(videoCreateSchema, body);
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.violation.field).toBe(field);
  expect(r.violation.code).toBe(code);
  expect(r.violation.message).not.toMatch(/\.md\b|§/);
}

describe('common.md §2.3 model', () => {
  it.each(VIDEO_MODELS.map((m) => [m]))('%s is a video model', (m) => {
    expect(VIDEO_REFERENCE_RULES[m]).toBeDefined();
  });
  it('rejects other names and a missing model with model_not_found', () => {
    bad({ model: 'chat-3.7-plus', prompt: 'x' }, 'model', 'model_not_found');
    bad({ prompt: 'x' }, 'model', 'model_not_found');
  });
  it('rejects fields the document does not declare', () => {
    expect(check(videoCreateSchema, { model: 'vid-2.7-t2v', size: '1280x720' })).toMatchObject({
      ok: false,
      violation: { message: expect.stringContaining('size') as unknown },
    });
  });
  it('prompt must be a string', () => {
    bad({ model: 'vid-2.7-t2v', prompt: 5 }, 'prompt');
  });
});

describe('common.md §2.3 seconds', () => {
  it.each([2, 3, 10, 15])('vid-2.7 accepts %i', (s) => ok({ model: 'vid-2.7-t2v', seconds: s }));
  it.each([0, 1, 16, 100, -3, 2.5, '5', null, true])('rejects %j with invalid_duration', (s) =>
    bad({ model: 'vid-2.7-t2v', seconds: s }, 'seconds', 'invalid_duration'),
  );
  it('clip-1.x needs at least 3', () => {
    for (const m of VIDEO_MODELS.filter((x) => x.startsWith('clip-1.'))) {
      const base = validRefs(m);
      bad({ ...base, seconds: 2 }, 'seconds', 'invalid_duration');
      ok({ ...base, seconds: 3 });
      ok({ ...base, seconds: 15 });
    }
  });
  it('seconds may be omitted', () => ok({ model: 'clip-1.1-t2v' }));
});

describe('common.md §2.3 resolution', () => {
  it.each(['720p', '1080p'])('accepts %s', (r) => ok({ model: 'clip-1.1-t2v', resolution: r }));
  it.each(['4k', '1080P', '480p', 720, '', null])('rejects %j with invalid_resolution', (r) =>
    bad({ model: 'clip-1.1-t2v', resolution: r }, 'resolution', 'invalid_resolution'),
  );
});

describe('common.md §2.3/§7 seed', () => {
  it.each([0, 1, 42, 2147483647])('accepts %i', (s) => ok({ model: 'vid-2.7-t2v', seed: s }));
  it.each([-1, 2147483648, 1.5, '42', '0', null, Number.NaN])('rejects %j', (s) =>
    bad({ model: 'vid-2.7-t2v', seed: s }, 'seed', 'invalid_seed'),
  );
});

/** A body each model accepts (its minimum references). */
function validRefs(model: string): Record<string, unknown> {
  switch (model) {
    case 'clip-1.1-i2v':
    case 'clip-1.0-i2v':
    case 'clip-1.0-r2v':
    case 'clip-1.1-r2v':
    case 'vid-2.7-i2v':
    case 'clip-1.0-video-edit':
      return { model, input_reference: { image_url: IMG } };
    case 'vid-2.7-r2v':
    case 'vid-2.7-videoedit':
      return { model, references: { video: [VID] } };
    default:
      return { model };
  }
}

describe('common.md §2.3 reference table, all ten models', () => {
  it.each(VIDEO_MODELS.map((m) => [m]))('%s: its minimum body is valid', (m) => ok(validRefs(m)));

  it.each(['clip-1.1-t2v', 'vid-2.7-t2v'])('%s takes no reference input at all', (m) => {
    bad({ model: m, input_reference: { image_url: IMG } }, 'input_reference', 'invalid_reference');
    bad({ model: m, input_image: IMG }, 'input_image', 'invalid_reference');
    bad({ model: m, references: { video: [VID] } }, 'references.video', 'invalid_reference');
  });

  it.each(['clip-1.1-i2v', 'clip-1.0-i2v'])(
    '%s: one first-frame image via input_reference or input_image',
    (m) => {
      ok({ model: m, input_reference: { image_url: IMG } });
      ok({ model: m, input_reference: IMG });
      ok({ model: m, input_reference: [{ image_url: IMG }] });
      ok({ model: m, input_image: IMG });
      ok({ model: m, input_image: { image_url: IMG } });
      bad({ model: m }, 'input_reference', 'invalid_reference');
      bad(
        { model: m, input_reference: [{ image_url: IMG }, { image_url: IMG2 }] },
        'input_reference',
        'invalid_reference',
      );
      bad(
        { model: m, input_reference: { image_url: IMG }, input_image: IMG2 },
        'input_image',
        'invalid_reference',
      );
      bad({ model: m, input_reference: VID }, 'input_reference', 'invalid_reference');
      bad(
        { model: m, references: { video: [VID] }, input_image: IMG },
        'references.video',
        'invalid_reference',
      );
    },
  );

  it('clip-1.1-r2v: images via input_reference; 1 to 9 recommended (warning, not a rejection)', () => {
    const m = 'clip-1.1-r2v';
    const many = Array.from({ length: 10 }, (_, i) => ({ image_url: `https://example.com/${i}.png` }));
    ok({ model: m, input_reference: IMG });
    ok({ model: m, input_reference: many.slice(0, 9) });
    ok({ model: m, input_reference: many });
    ok({ model: m });
    expect(videoCreateWarnings({ model: m, input_reference: many.slice(0, 9) })).toEqual([]);
    expect(videoCreateWarnings({ model: m, input_reference: many })[0]).toMatch(/1 to 9/);
    expect(videoCreateWarnings({ model: m })[0]).toMatch(/got 0/);
    bad({ model: m, input_image: IMG }, 'input_image', 'invalid_reference');
    bad({ model: m, references: { video: [VID] } }, 'references.video', 'invalid_reference');
    bad({ model: m, input_reference: [IMG, VID] }, 'input_reference[1]', 'invalid_reference');
  });

  it('clip-1.0-r2v: input_reference images, needs at least one', () => {
    const m = 'clip-1.0-r2v';
    ok({ model: m, input_reference: [{ image_url: IMG }, { image_url: IMG2 }] });
    bad({ model: m }, 'input_reference', 'invalid_reference');
    bad({ model: m, input_image: IMG }, 'input_image', 'invalid_reference');
    bad({ model: m, references: { video: [VID] } }, 'references.video', 'invalid_reference');
  });

  it('vid-2.7-i2v: image or video URL; a video only as the first item', () => {
    const m = 'vid-2.7-i2v';
    ok({ model: m, input_reference: VID });
    ok({ model: m, input_reference: [VID, { image_url: IMG }] });
    ok({ model: m, input_reference: [{ image_url: IMG }, { image_url: IMG2 }] });
    bad({ model: m, input_reference: [{ image_url: IMG }, VID] }, 'input_reference[1]', 'invalid_reference');
    bad({ model: m }, 'input_reference', 'invalid_reference');
    bad({ model: m, input_image: IMG }, 'input_image', 'invalid_reference');
    bad({ model: m, references: { video: [VID] } }, 'references.video', 'invalid_reference');
  });

  it('vid-2.7-r2v: references.video[] plus optional input_reference image object', () => {
    const m = 'vid-2.7-r2v';
    ok({ model: m, references: { video: [VID, MOV] }, input_reference: { image_url: IMG } });
    bad({ model: m, input_reference: { image_url: IMG } }, 'references.video', 'invalid_reference');
    bad({ model: m, references: { video: [] } }, 'references.video', 'invalid_reference');
    bad(
      { model: m, references: { video: [VID] }, input_reference: VID },
      'input_reference',
      'invalid_reference',
    );
    bad({ model: m, references: { video: [VID] }, input_image: IMG }, 'input_image', 'invalid_reference');
  });

  it('clip-1.0-video-edit: image input_reference or references.video[]', () => {
    const m = 'clip-1.0-video-edit';
    ok({ model: m, references: { video: [VID] } });
    ok({ model: m, input_reference: { image_url: IMG } });
    ok({ model: m, input_reference: { image_url: IMG }, references: { video: [VID] } });
    bad({ model: m }, 'input_reference', 'invalid_reference');
    bad({ model: m, input_reference: VID }, 'input_reference', 'invalid_reference');
    bad({ model: m, input_image: IMG }, 'input_image', 'invalid_reference');
  });

  it('vid-2.7-videoedit: references.video[] (the source) plus optional image input_reference', () => {
    const m = 'vid-2.7-videoedit';
    ok({ model: m, references: { video: [VID] }, input_reference: { image_url: IMG } });
    bad({ model: m, input_reference: { image_url: IMG } }, 'references.video', 'invalid_reference');
    bad({ model: m, references: { video: [VID] }, input_image: IMG }, 'input_image', 'invalid_reference');
  });

  it('image URLs must be https; video URLs must end in .mp4 or .mov', () => {
    bad(
      { model: 'clip-1.1-i2v', input_reference: { image_url: 'http://example.com/a.png' } },
      'input_reference',
      'invalid_reference',
    );
    bad(
      { model: 'clip-1.1-i2v', input_image: 'ftp://example.com/a.png' },
      'input_image',
      'invalid_reference',
    );
    bad(
      { model: 'clip-1.1-i2v', input_reference: { image_url: 'a.png' } },
      'input_reference',
      'invalid_reference',
    );
    bad({ model: 'clip-1.1-i2v', input_reference: { nothing: 1 } }, 'input_reference', 'invalid_reference');
    bad(
      { model: 'vid-2.7-r2v', references: { video: ['https://example.com/clip.avi'] } },
      'references.video[0]',
      'invalid_reference',
    );
    bad(
      { model: 'vid-2.7-r2v', references: { video: ['file:///tmp/clip.mp4'] } },
      'references.video[0]',
      'invalid_reference',
    );
    bad({ model: 'vid-2.7-r2v', references: { video: 'https://example.com/clip.mp4' } }, 'references.video');
    ok({ model: 'vid-2.7-r2v', references: { video: [MOV] } });
  });

  it('reads the reference forms of §2.3 (string, object, array, {image_url:{url}})', () => {
    expect(referenceItems(IMG)).toEqual([{ url: IMG, kind: 'image' }]);
    expect(referenceItems({ image_url: { url: IMG } })).toEqual([{ url: IMG, kind: 'image' }]);
    expect(referenceItems([VID, { video_url: MOV }])).toEqual([
      { url: VID, kind: 'video' },
      { url: MOV, kind: 'video' },
    ]);
    expect(referenceItems(undefined)).toEqual([]);
  });
});

describe('common.md §3 states', () => {
  it('classifies the seven words', () => {
    for (const s of ['queued', 'in_progress', 'processing']) {
      expect([isVideoRunning(s), isVideoTerminal(s)]).toEqual([true, false]);
    }
    for (const s of ['completed', 'success'])
      expect([isVideoSuccess(s), isVideoTerminal(s)]).toEqual([true, true]);
    for (const s of ['failed', 'cancelled'])
      expect([isVideoFailure(s), isVideoTerminal(s)]).toEqual([true, true]);
    expect(isVideoTerminal('weird')).toBe(false);
    expect(isVideoRunning(undefined)).toBe(false);
  });
});

describe('common.md §2.3 clip-1.1 list price', () => {
  it('0.90/s at 720p, 1.20/s at 1080p, default 1080p', () => {
    expect(videoListPrice('clip-1.1-t2v', 5, '720p')).toMatchObject({
      currency: 'CNY',
      perSecond: 0.9,
      amount: 4.5,
    });
    expect(videoListPrice('clip-1.1-i2v', 5, '1080p')).toMatchObject({
      amount: 6,
      resolutionDefaulted: false,
    });
    expect(videoListPrice('clip-1.1-r2v', 3, undefined)).toMatchObject({
      resolution: '1080p',
      amount: 3.6,
      resolutionDefaulted: true,
    });
    expect(videoListPrice('clip-1.1-t2v', undefined, '720p')).toMatchObject({
      amount: undefined,
      perSecond: 0.9,
    });
  });
  it('gives no price where the contract gives none', () => {
    expect(videoListPrice('clip-1.0-i2v', 5, '720p')).toBeUndefined();
    expect(videoListPrice('vid-2.7-t2v', 5, '720p')).toBeUndefined();
    expect(videoListPrice('clip-1.1-t2v', 5, '4k')).toBeUndefined();
  });
});

describe('video records (tolerant)', () => {
  it('accepts video_id or id, keeps unknown fields, requires a status', () => {
    expect(videoRecordSchema.parse({ video_id: 'v1', status: 'queued', extra: 1 })).toEqual({
      video_id: 'v1',
      status: 'queued',
      extra: 1,
    });
    expect(videoRecordSchema.parse({ id: 'v2', status: 'success' }).video_id).toBe('v2');
    expect(videoRecordSchema.safeParse({ status: 'queued' }).success).toBe(false);
    expect(videoRecordSchema.safeParse({ video_id: 'v' }).success).toBe(false);
  });
  it('finds the result URL, expires_at and the error in their usual forms', () => {
    expect(videoResultUrl({ url: 'https://cdn/x.mp4' })).toBe('https://cdn/x.mp4');
    expect(videoResultUrl({ result_url: 'https://cdn/y.mp4' })).toBe('https://cdn/y.mp4');
    expect(videoResultUrl({ content: { video_url: 'https://cdn/z.mp4' } })).toBe('https://cdn/z.mp4');
    expect(videoResultUrl({})).toBeUndefined();
    expect(videoExpiresAt({ expires_at: 1_800_000_000 })?.getTime()).toBe(1_800_000_000_000);
    expect(videoExpiresAt({ expires_at: 1_800_000_000_000 })?.getTime()).toBe(1_800_000_000_000);
    expect(videoExpiresAt({ expires_at: '2027-01-15T00:00:00Z' })?.toISOString()).toBe(
      '2027-01-15T00:00:00.000Z',
    );
    expect(videoExpiresAt({ expires_at: null })).toBeUndefined();
    expect(videoError({ error: { code: 'x', message: 'y' } })).toEqual({ code: 'x', message: 'y' });
    expect(videoError({ error: 'boom' })).toEqual({ code: undefined, message: 'boom' });
  });
});
