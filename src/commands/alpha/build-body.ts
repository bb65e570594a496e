import { readFileSync } from 'node:fs';
import { isHttpUrl } from '../../contract/alpha.js';
import {
  parseCameraFlag,
  parseDynamicMaskFlag,
  parseJsonFlag,
  parseNumberFlag,
} from './flags.js';
import { UsageError } from '../../core/errors.js';
import { sniffImageType } from '../../contract/image-size.js';

/** The flags of `gw alpha i2v` as commander parses them. */
export interface I2vFlags {
  image?: string;
  imageTail?: string;
  prompt?: string;
  negativePrompt?: string;
  model?: string;
  mode?: string;
  duration?: string;
  aspectRatio?: string;
  cfgScale?: string;
  staticMask?: string;
  dynamicMask?: string[];
  camera?: string;
  sound?: string;
  voice?: string[];
  watermarkInfo?: string;
  callbackUrl?: string;
  externalTaskId?: string;
  body?: string;
}

/** How files are read (tests may inject). */
export type ReadFile = (path: string) => Buffer;

function readLocal(flag: string, field: string, path: string, read: ReadFile): Buffer {
  try {
    return read(path);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a directory'
            : (e as Error).message;
    throw new UsageError(`${flag}: cannot read file "${path}": ${why}`, { field });
  }
}

/**
 * An image flag's value: an http(s) URL is sent as it is; anything else is a local file, read and sent as
 * Base64. Files must be PNG or JPEG (the upstream's types, wire-formats.md §5) unless validation is off.
 */
export function imageSource(
  flag: string,
  field: string,
  value: string,
  o: { validate: boolean; read: ReadFile },
): string {
  if (isHttpUrl(value)) return value;
  const bytes = readLocal(flag, field, value, o.read);
  if (o.validate && sniffImageType(bytes) === undefined) {
    throw new UsageError(`${flag}: "${value}" is not a PNG or JPEG image (gw sends PNG and JPEG files)`, {
      field,
    });
  }
  return bytes.toString('base64');
}

function readBodyFile(path: string, read: ReadFile): Record<string, unknown> {
  const text = readLocal('--body', 'body', path, read).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--body: "${path}" is not valid JSON (${(e as Error).message})`, { field: 'body' });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError(`--body: "${path}" must hold a JSON object (the request body)`, { field: 'body' });
  }
  return value as Record<string, unknown>;
}

/**
 * The request body of `gw alpha i2v`: the `--body` file (whole or partial), then every flag given on top of it
 * (a repeatable flag replaces the whole list). The result is not yet checked against the contract.
 */
export function buildI2vBody(
  f: I2vFlags,
  o: { validate: boolean; read?: ReadFile },
): Record<string, unknown> {
  const read = o.read ?? ((p: string) => readFileSync(p));
  const img = { validate: o.validate, read };
  const body: Record<string, unknown> = f.body !== undefined ? readBodyFile(f.body, read) : {};
  const set = (key: string, value: unknown): void => {
    if (value !== undefined) body[key] = value;
  };
  set('model_name', f.model);
  if (f.image !== undefined) set('image', imageSource('--image', 'image', f.image, img));
  if (f.imageTail !== undefined)
    set('image_tail', imageSource('--image-tail', 'image_tail', f.imageTail, img));
  set('prompt', f.prompt);
  set('negative_prompt', f.negativePrompt);
  set('mode', f.mode);
  set('duration', f.duration);
  set('aspect_ratio', f.aspectRatio);
  if (f.cfgScale !== undefined) set('cfg_scale', parseNumberFlag('--cfg-scale', 'cfg_scale', f.cfgScale));
  if (f.staticMask !== undefined) {
    set('static_mask', imageSource('--static-mask', 'static_mask', f.staticMask, img));
  }
  if (f.dynamicMask !== undefined && f.dynamicMask.length > 0) {
    set(
      'dynamic_masks',
      f.dynamicMask.map((spec) => {
        const { source, trajectories } = parseDynamicMaskFlag(spec);
        return { mask: imageSource('--dynamic-mask', 'dynamic_masks', source, img), trajectories };
      }),
    );
  }
  if (f.camera !== undefined) set('camera_control', parseCameraFlag(f.camera));
  set('sound', f.sound);
  if (f.voice !== undefined && f.voice.length > 0) {
    set(
      'voice_list',
      f.voice.map((v) => parseJsonFlag('--voice', 'voice_list', v)),
    );
  }
  if (f.watermarkInfo !== undefined) {
    set('watermark_info', parseJsonFlag('--watermark-info', 'watermark_info', f.watermarkInfo));
  }
  set('callback_url', f.callbackUrl);
  set('external_task_id', f.externalTaskId);
  return body;
}
