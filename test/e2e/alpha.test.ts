import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal } from '../../src/core/journal.js';
import { alphaStore } from '../../src/sim/routes/alpha.js';
import { isolatedDirs, runGw, spawnGw } from '../helpers/gw.js';
import { makeJpeg, makePng } from '../helpers/images.js';
import { useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

const URL_IMG = 'https://example.com/first.png';

/** A scratch directory with generated images: 640x360 PNG/JPEG image and masks, a 320x180 mask, a text file. */
function files(): Record<string, string> {
  const dir = tempDir('gw-alpha-');
  const put = (name: string, bytes: Buffer | string): string => {
    const p = join(dir, name);
    writeFileSync(p, bytes);
    return p;
  };
  return {
    dir,
    png: put('first.png', makePng(640, 360)),
    tiny: put('tiny.png', makePng(64, 36)),
    jpeg: put('first.jpg', makeJpeg(640, 360)),
    mask: put('mask.png', makePng(640, 360, 0xff)),
    mask2: put('mask2.png', makePng(640, 360, 0x10)),
    small: put('small.png', makePng(320, 180, 0xff)),
    text: put('notes.txt', 'not an image'),
  };
}

function bodyOf(sim: Awaited<ReturnType<typeof useSim>>): Record<string, unknown> {
  expect(sim.requests).toHaveLength(1);
  return sim.requests[0]?.body as Record<string, unknown>;
}

describe('gw alpha i2v against gw sim', () => {
  it('sends a local PNG as Base64, prints only the task id, and journals the task first', async () => {
    const sim = await useSim();
    const f = files();
    const dirs = isolatedDirs();
    const r = await runGw(['alpha', 'i2v', '--image', f.png!, '--prompt', 'a cat turns'], {
      env: { ...sim.env, ...dirs },
    });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const body = bodyOf(sim);
    expect(body).toEqual({ image: makePng(640, 360).toString('base64'), prompt: 'a cat turns' });
    expect(sim.requests[0]?.path).toBe('/alpha/v1/videos/image2video');
    const tasks = alphaStore(sim.sim).get('default');
    expect(tasks?.size).toBe(1);
    const id = [...tasks!.keys()][0]!;
    expect(r.stdout).toBe(`${id}\n`);
    // gw history is another slice; the journal it reads is asserted directly
    const entries = new Journal(dirs.GW_STATE_DIR).list();
    expect(entries).toEqual([
      expect.objectContaining({
        kind: 'alpha',
        id,
        model: 'alpha-v1',
        state: 'submitted',
        requestId: sim.requests[0]?.requestId,
        baseUrl: sim.baseUrl,
      }),
    ]);
  });

  it('sends a JPEG file and a URL image as they are; --json prints the whole answer', async () => {
    const sim = await useSim();
    const f = files();
    const a = await runGw(['alpha', 'i2v', '--image', f.jpeg!], { env: sim.env });
    expect(a.exitCode).toBe(0);
    const r = await runGw(['--json', 'alpha', 'i2v', '--image', URL_IMG, '--external-task-id', 'job-7'], {
      env: sim.env,
    });
    expect(r.exitCode).toBe(0);
    expect(sim.requests[1]?.body).toEqual({ image: URL_IMG, external_task_id: 'job-7' });
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      code: 0,
      message: 'success',
      request_id: sim.requests[1]?.requestId,
      data: { task_status: 'submitted', task_info: { external_task_id: 'job-7' } },
    });
    expect(typeof out.data.created_at).toBe('number');
    // printed as the gateway sent it (key order included)
    expect(Object.keys(out.data)).toEqual([
      'task_id',
      'task_info',
      'task_status',
      'created_at',
      'updated_at',
    ]);
  });

  it('sends masks with integer trajectories (origin bottom-left) and a static mask', async () => {
    const sim = await useSim();
    const f = files();
    const r = await runGw(
      [
        'alpha',
        'i2v',
        '--image',
        f.png!,
        '--static-mask',
        f.mask!,
        '--dynamic-mask',
        `${f.mask}:1,2;10,20;30,35`,
        '--dynamic-mask',
        `${f.mask2}:0,0;639,359`,
      ],
      { env: sim.env },
    );
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const body = bodyOf(sim);
    const mask = makePng(640, 360, 0xff).toString('base64');
    expect(body.static_mask).toBe(mask);
    expect(body.dynamic_masks).toEqual([
      {
        mask,
        trajectories: [
          { x: 1, y: 2 },
          { x: 10, y: 20 },
          { x: 30, y: 35 },
        ],
      },
      {
        mask: makePng(640, 360, 0x10).toString('base64'),
        trajectories: [
          { x: 0, y: 0 },
          { x: 639, y: 359 },
        ],
      },
    ]);
  });

  it('warns that the upstream may fail when the mask resolution cannot be checked (URL image)', async () => {
    const sim = await useSim();
    const f = files();
    const r = await runGw(['alpha', 'i2v', '--image', URL_IMG, '--dynamic-mask', `${f.mask}:1,2;3,4`], {
      env: sim.env,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain('warning: mask resolution not checked');
    expect(r.stderr).toContain('may make the upstream fail');
  });

  it('warns, and still sends, when a local image breaks an upstream limit (min 300 px)', async () => {
    const sim = await useSim();
    const f = files();
    const r = await runGw(['alpha', 'i2v', '--image', f.tiny!], { env: sim.env });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain('warning: image is 64x36, under 300 px (jpg/png, at most 10 MB');
    expect(sim.requests).toHaveLength(1);
  });

  it('sends a camera move', async () => {
    const sim = await useSim();
    const r = await runGw(
      ['alpha', 'i2v', '--image', URL_IMG, '--camera', 'simple:zoom=5', '--duration', '10', '--mode', 'pro'],
      { env: sim.env },
    );
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(bodyOf(sim)).toEqual({
      image: URL_IMG,
      camera_control: { type: 'simple', config: { zoom: 5 } },
      duration: '10',
      mode: 'pro',
    });
  });

  it('sends an alpha-v2-6 call with sound and two voices', async () => {
    const sim = await useSim();
    const r = await runGw(
      [
        'alpha',
        'i2v',
        '--image',
        URL_IMG,
        '--model',
        'alpha-v2-6',
        '--sound',
        'on',
        '--voice',
        '{"voice_id":"narrator"}',
        '--voice',
        '{"voice_id":"child"}',
      ],
      { env: sim.env },
    );
    expect(r.exitCode).toBe(0);
    expect(bodyOf(sim)).toEqual({
      image: URL_IMG,
      model_name: 'alpha-v2-6',
      sound: 'on',
      voice_list: [{ voice_id: 'narrator' }, { voice_id: 'child' }],
    });
    const [task] = alphaStore(sim.sim).get('default')!.values();
    expect(task?.model_name).toBe('alpha-v2-6');
  });

  it('--body gives a partial body that flags override; the merged body is validated', async () => {
    const sim = await useSim();
    const f = files();
    const file = join(f.dir!, 'body.json');
    writeFileSync(
      file,
      JSON.stringify({
        image: URL_IMG,
        prompt: 'from the file',
        duration: '10',
        mode: 'pro',
        cfg_scale: 0.4,
      }),
    );
    const r = await runGw(['alpha', 'i2v', '--body', file, '--prompt', 'from a flag', '--mode', 'std'], {
      env: sim.env,
    });
    expect(r.exitCode).toBe(0);
    expect(bodyOf(sim)).toEqual({
      image: URL_IMG,
      prompt: 'from a flag',
      duration: '10',
      mode: 'std',
      cfg_scale: 0.4,
    });
    // the file's cfg_scale becomes illegal once a flag picks a v2 model: nothing is sent
    const bad = await runGw(['alpha', 'i2v', '--body', file, '--model', 'alpha-v2-5'], { env: sim.env });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('cfg_scale: only allowed with models alpha-v1, alpha-v1-5, alpha-v1-6');
    expect(sim.requests).toHaveLength(1);
  });

  it('--multipart sends the same fields as multipart/form-data', async () => {
    const sim = await useSim();
    const f = files();
    const r = await runGw(
      [
        'alpha',
        'i2v',
        '--multipart',
        '--image',
        f.png!,
        '--dynamic-mask',
        `${f.mask}:1,2;3,4`,
        '--cfg-scale',
        '0.5',
        '--watermark-info',
        '{"enabled":true}',
      ],
      { env: sim.env },
    );
    expect(r.exitCode).toBe(0);
    expect(String(sim.requests[0]?.headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
    const [task] = alphaStore(sim.sim).get('default')!.values();
    expect(task?.encoding).toBe('multipart');
    expect(r.stdout).toBe(`${task?.task_id}\n`);
  });

  it('--dry-run prints the body with Base64 abbreviated and sends nothing (no token needed)', async () => {
    const sim = await useSim();
    const f = files();
    const argv = [
      'alpha',
      'i2v',
      '--dry-run',
      '--image',
      f.png!,
      '--dynamic-mask',
      `${f.mask}:1,2;3,4`,
      '--prompt',
      'p',
    ];
    const r = await runGw(argv, { env: {} });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('POST /alpha/v1/videos/image2video');
    const json = await runGw([...argv, '--json'], { env: {} });
    const printed = (JSON.parse(json.stdout) as { body: unknown }).body;
    expect(printed).toEqual({
      image: expect.stringMatching(/^<base64 PNG 640x360, \d+\.\d KiB>$/) as string,
      prompt: 'p',
      dynamic_masks: [
        {
          mask: expect.stringMatching(/^<base64 PNG 640x360, /) as string,
          trajectories: [
            { x: 1, y: 2 },
            { x: 3, y: 4 },
          ],
        },
      ],
    });
    expect(r.stderr).toContain('the body would be sent as application/json');
    expect(r.stderr).toContain('dry run: nothing was sent');
    expect(sim.requests).toHaveLength(0);
  });

  it('--no-validate sends a rule-breaking body; the simulator rejects it (1201, exit 1, request id)', async () => {
    const sim = await useSim();
    const r = await runGw(
      ['--no-validate', 'alpha', 'i2v', '--image', URL_IMG, '--model', 'alpha-v2-1', '--cfg-scale', '0.5'],
      { env: sim.env },
    );
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error: 1201: cfg_scale: only allowed with models alpha-v1');
    expect(r.stderr).toContain(`request id: ${sim.requests[0]?.requestId}`);
  });

  it('a model the token cannot see is the gateway error 1203 (exit 1)', async () => {
    const sim = await useSim({ tokens: { 'sk-v2': { tenant: 't', models: ['alpha-v2-6'] } } });
    const r = await runGw(['alpha', 'i2v', '--image', URL_IMG, '--model', 'alpha-v1-6'], {
      env: { ...sim.env, GW_TOKEN: 'sk-v2' },
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error: 1203: model_name: model alpha-v1-6 not found');
  });

  it('the real bin/gw sends multipart with a JPEG file', async () => {
    const sim = await useSim();
    const f = files();
    const r = await spawnGw(['alpha', 'i2v', '--multipart', '--image', f.jpeg!, '--camera', 'down_back'], {
      env: sim.env,
    });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^\w+\n$/);
  });
});

describe('gw alpha i2v refuses every invalid combination: exit 2, nothing sent', () => {
  const f = files();
  const body = (name: string, value: unknown): string => {
    const p = join(f.dir!, name);
    writeFileSync(p, typeof value === 'string' ? value : JSON.stringify(value));
    return p;
  };
  const m = (pts: string, file = f.mask!): string[] => ['--dynamic-mask', `${file}:${pts}`];
  const points = (n: number): string => Array.from({ length: n }, (_, i) => `${i % 60},${i % 30}`).join(';');
  const cases: [string, string[], string][] = [
    ['no image at all', ['--prompt', 'x'], 'image: is required'],
    ['a missing image file', ['--image', join(f.dir!, 'nope.png')], 'cannot read file'],
    ['an image file that is not PNG/JPEG', ['--image', f.text!], 'is not a PNG or JPEG image'],
    ['a directory as image', ['--image', f.dir!], 'it is a directory'],
    ['image_tail with camera', ['--image-tail', URL_IMG, '--camera', 'simple:zoom=5'], 'mutually exclusive'],
    ['image_tail with a dynamic mask', ['--image-tail', URL_IMG, ...m('1,2;3,4')], 'mutually exclusive'],
    [
      'static mask with camera',
      ['--static-mask', f.mask!, '--camera', 'simple:zoom=2'],
      'mutually exclusive',
    ],
    ['cfg_scale above 1', ['--cfg-scale', '1.5'], '--cfg-scale: must be a number from 0 to 1'],
    [
      'cfg_scale with a v2 model',
      ['--cfg-scale', '0.5', '--model', 'alpha-v2-1'],
      'only allowed with models alpha-v1',
    ],
    ['cfg_scale not a number', ['--cfg-scale', 'high'], '--cfg-scale: "high" is not a number'],
    ['sound with the default model', ['--sound', 'on'], 'sound: only allowed with model alpha-v2-6'],
    ['sound outside on|off', ['--model', 'alpha-v2-6', '--sound', 'yes'], 'sound: must be one of on, off'],
    [
      'voice without sound on',
      ['--model', 'alpha-v2-6', '--voice', '{"voice_id":"a"}'],
      '--voice: requires sound = on',
    ],
    [
      'three voices',
      ['--model', 'alpha-v2-6', '--sound', 'on', '--voice', '{}', '--voice', '{}', '--voice', '{}'],
      '--voice: must have at most 2 entries',
    ],
    ['voice on another model', ['--model', 'alpha-v1-6', '--voice', '{}'], '--voice: only allowed'],
    ['voice that is not JSON', ['--voice', 'narrator'], '--voice: not valid JSON'],
    ['duration 7', ['--duration', '7'], 'duration: must be the string "5" or "10"'],
    ['mode turbo', ['--mode', 'turbo'], 'mode: must be one of std, pro'],
    ['aspect ratio 4:3', ['--aspect-ratio', '4:3'], '--aspect-ratio: must be one of 16:9, 9:16, 1:1'],
    ['unknown model', ['--model', 'alpha-v9'], '--model: must be one of alpha-v1'],
    ['7 dynamic masks', Array.from({ length: 7 }, () => m('1,2;3,4')).flat(), 'at most 6 groups'],
    ['1 trajectory point', m('1,2'), 'dynamic_masks[0].trajectories: has too few points'],
    ['78 trajectory points', m(points(78)), 'dynamic_masks[0].trajectories: has too many points'],
    ['a non-integer point', m('1.5,2;3,4'), 'dynamic_masks[0].trajectories[0].x: must be an integer'],
    ['a malformed point', m('1;3,4'), 'point "1" is not x,y'],
    ['a dynamic mask without points', ['--dynamic-mask', f.mask!], 'expected <file>:<x,y;x,y;...>'],
    ['a missing mask file', m('1,2;3,4', join(f.dir!, 'gone.png')), 'cannot read file'],
    ['a mask URL (masks are Base64)', m('1,2;3,4', 'https://example.com/m.png'), 'must be Base64'],
    [
      'a dynamic mask of another resolution',
      ['--image', f.png!, ...m('1,2;3,4', f.small)],
      'dynamic_masks[0].mask: resolution 320x180 differs from image (640x360)',
    ],
    [
      'a static mask of another resolution',
      ['--image', f.png!, '--static-mask', f.small!],
      'mask resolution must equal that of image',
    ],
    ['a camera without type', ['--camera', ':zoom=5'], '--camera ":zoom=5": expected <type>'],
    ['a camera value that is not a number', ['--camera', 'simple:zoom=far'], 'is not key=<number>'],
    [
      'an http callback',
      ['--callback-url', 'http://hooks.example.com/x'],
      'callback_url: must be an https URL',
    ],
    ['a missing --body file', ['--body', join(f.dir!, 'none.json')], '--body: cannot read file'],
    ['a --body that is not JSON', ['--body', body('bad.json', '{image:')], 'is not valid JSON'],
    ['a --body that is an array', ['--body', body('arr.json', [1])], 'must hold a JSON object'],
    [
      'a --body with a numeric duration',
      ['--body', body('num.json', { image: URL_IMG, duration: 5 })],
      'duration: must be the string',
    ],
    [
      'a watermark that is not an object',
      ['--watermark-info', 'true'],
      '--watermark-info: must be an object',
    ],
  ];

  it.each(cases)('%s', async (_name, args, words) => {
    const sim = await useSim();
    const withImage = args.includes('--image') || args.includes('--body') || _name === 'no image at all';
    const argv = ['alpha', 'i2v', ...(withImage ? [] : ['--image', URL_IMG]), ...args];
    const r = await runGw(argv, { env: sim.env });
    expect(r.stderr).toContain(words);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(sim.requests).toHaveLength(0);
  });

  it('a --body with an image makes --image unnecessary', async () => {
    const sim = await useSim();
    const r = await runGw(['alpha', 'i2v', '--body', body('ok.json', { image: URL_IMG })], { env: sim.env });
    expect(r.exitCode).toBe(0);
  });
});
