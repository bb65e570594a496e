import { describe, expect, it } from 'vitest';
import { abbreviateBase64, abbreviateBody, alphaWarnings } from '../../../src/commands/alpha/flags.js';
import {
  parseCameraFlag,
  parseDynamicMaskFlag,
  parseJsonFlag,
  parseNumberFlag,
} from '../../../src/commands/alpha/i2v-flags.js';
import { UsageError } from '../../../src/core/errors.js';
import { makeJpeg, makePng } from '../../helpers/images.js';

const IMG = makePng(640, 360).toString('base64');
const URL_IMG = 'https://example.com/a.png';

describe('--dynamic-mask syntax', () => {
  it('splits file and points at the last colon (paths with colons work)', () => {
    expect(parseDynamicMaskFlag('C:\\masks\\m.png:1,2; 3 , 4;')).toEqual({
      source: 'C:\\masks\\m.png',
      trajectories: [
        { x: 1, y: 2 },
        { x: 3, y: 4 },
      ],
    });
    expect(parseDynamicMaskFlag('m.png:1.5,2').trajectories).toEqual([{ x: 1.5, y: 2 }]); // judged by the contract
  });

  it.each(['m.png', ':1,2;3,4', 'm.png:', 'm.png:1;2,3', 'm.png:a,b', 'm.png:1,2,3', 'm.png:,2'])(
    'refuses %s',
    (spec) => {
      expect(() => parseDynamicMaskFlag(spec)).toThrow(UsageError);
    },
  );
});

describe('--camera syntax', () => {
  it('type alone, or type with numeric config', () => {
    expect(parseCameraFlag('down_back')).toEqual({ type: 'down_back' });
    expect(parseCameraFlag('simple:zoom=5')).toEqual({ type: 'simple', config: { zoom: 5 } });
    expect(parseCameraFlag('simple:zoom=0, pan=-2.5')).toEqual({
      type: 'simple',
      config: { zoom: 0, pan: -2.5 },
    });
  });

  it.each([':zoom=5', '', 'simple:', 'simple:zoom', 'simple:zoom=', 'simple:=3', 'simple:zoom=x'])(
    'refuses "%s"',
    (spec) => {
      expect(() => parseCameraFlag(spec)).toThrow(UsageError);
    },
  );
});

describe('JSON and number flags', () => {
  it('parses or names the flag', () => {
    expect(parseJsonFlag('--voice', 'voice_list', '{"voice_id":"a"}')).toEqual({ voice_id: 'a' });
    expect(() => parseJsonFlag('--voice', 'voice_list', 'a')).toThrow(/--voice: not valid JSON/);
    expect(parseNumberFlag('--cfg-scale', 'cfg_scale', '0.25')).toBe(0.25);
    expect(() => parseNumberFlag('--cfg-scale', 'cfg_scale', '')).toThrow(/is not a number/);
    expect(() => parseNumberFlag('--cfg-scale', 'cfg_scale', 'NaN')).toThrow(/is not a number/);
  });
});

describe('alphaWarnings', () => {
  it('is quiet for a clean body', () => {
    expect(alphaWarnings({ image: IMG, camera_control: { type: 'simple', config: { zoom: 5 } } })).toEqual(
      [],
    );
    expect(alphaWarnings({ image: URL_IMG })).toEqual([]);
  });

  it('warns when a mask resolution cannot be checked', () => {
    const mask = makePng(640, 360).toString('base64');
    expect(alphaWarnings({ image: URL_IMG, static_mask: mask })[0]).toContain('may make the upstream fail');
    expect(alphaWarnings({ image: IMG, static_mask: 'https://example.com/m.png' })[0]).toContain(
      'may make the upstream fail',
    );
    expect(alphaWarnings({ image: IMG, static_mask: mask })).toEqual([]);
  });

  it('warns about upstream image limits (wire-formats §5)', () => {
    expect(alphaWarnings({ image: makePng(200, 200).toString('base64') })[0]).toContain('under 300 px');
    expect(alphaWarnings({ image: makeJpeg(1000, 300).toString('base64') })[0]).toContain('outside aspect');
  });

  it('warns about trajectory points outside the image', () => {
    const mask = makePng(640, 360).toString('base64');
    const w = alphaWarnings({
      image: IMG,
      dynamic_masks: [
        {
          mask,
          trajectories: [
            { x: 0, y: 0 },
            { x: 640, y: 10 },
          ],
        },
      ],
    });
    expect(w).toEqual([expect.stringContaining('1 point(s) outside the 640x360 image')]);
  });

  it.each([
    [{ type: 'orbit' }, 'not one the upstream lists'],
    [{ type: 'down_back', config: { zoom: 1 } }, 'takes no config upstream'],
    [{ type: 'simple' }, 'needs a config'],
    [{ type: 'simple', config: { zoom: 2, pan: 1 } }, 'exactly one non-zero'],
    [{ type: 'simple', config: { zoom: 0 } }, 'exactly one non-zero'],
    [{ type: 'simple', config: { zoom: 11 } }, 'within -10..10'],
    [{ type: 'simple', config: { dolly: 1 } }, 'unknown upstream'],
  ])('warns about camera %j (wire-formats §5)', (camera, words) => {
    expect(alphaWarnings({ image: URL_IMG, camera_control: camera }).join('\n')).toContain(words);
  });
});

describe('dry-run abbreviation', () => {
  it('abbreviates Base64 images with type, size and KiB; leaves URLs and prompts', () => {
    expect(abbreviateBase64(IMG)).toMatch(/^<base64 PNG 640x360, \d+\.\d KiB>$/);
    expect(abbreviateBase64(URL_IMG)).toBe(URL_IMG);
    expect(abbreviateBase64(Buffer.alloc(3072).toString('base64'))).toBe('<base64, 3.0 KiB>');
    const out = JSON.parse(
      JSON.stringify(
        abbreviateBody({
          image: IMG,
          prompt: 'test',
          dynamic_masks: [{ mask: IMG, trajectories: [{ x: 1, y: 2 }] }],
          extra: { blob: Buffer.alloc(100).toString('base64') },
        }),
      ),
    );
    expect(out.prompt).toBe('test');
    expect(out.image).toMatch(/^<base64 PNG/);
    expect(out.dynamic_masks[0].mask).toMatch(/^<base64 PNG/);
    expect(out.dynamic_masks[0].trajectories).toEqual([{ x: 1, y: 2 }]);
    expect(out.extra.blob).toBe('<base64, 0.1 KiB>');
  });
});
