import { readFileSync } from 'node:fs';
import { isHttpUrl } from '../../contract/alpha.js';
import { UsageError } from '../../core/errors.js';
import { LOCAL_LIMITS, parseLocalJson, readLocalFile } from '../../core/local-file.js';
import { sniffImageType } from '../../contract/image-size.js';

/** The flags of `gw alpha i2v` as its schema parsed them. */
export interface I2vFlags {
  image?: string | undefined;
  imageTail?: string | undefined;
  prompt?: string | undefined;
  negativePrompt?: string | undefined;
  model?: string | undefined;
  mode?: string | undefined;
  duration?: string | undefined;
  aspectRatio?: string | undefined;
  cfgScale?: number | undefined;
  staticMask?: string | undefined;
  dynamicMask?: Array<{ source: string; trajectories: { x: number; y: number }[] }> | undefined;
  camera?: { type: string; config?: Record<string, number> } | undefined;
  sound?: string | undefined;
  voice?: unknown[] | undefined;
  watermarkInfo?: unknown;
  callbackUrl?: string | undefined;
  externalTaskId?: string | undefined;
  body?: string | undefined;
}

/** How files are read (tests may inject). */
export type ReadFile = (path: string) => Buffer;

function readLocal(flag: string, field: string, path: string, read: ReadFile): Buffer {
  try {
    return read(path);
  } catch (e) {
    if (e instanceof UsageError) throw e; // already names the flag and the rule (size limit, directory…)
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
  return parseLocalJson(text, { flag: '--body', path, object: 'the request body' }) as Record<
    string,
    unknown
  >;
}

/**
 * Reads every local file the flags name (body, images, masks) asynchronously and within its size limit (a
 * 450 MB image or /dev/zero is exit 2 naming the limit; Ctrl-C stops the read), for buildI2vBody's `read`.
 * A file that cannot be read is reported when buildI2vBody asks for it, so errors come in flag order.
 */
export async function preloadI2vFiles(f: I2vFlags, signal: AbortSignal): Promise<ReadFile> {
  const wanted: Array<[string, string, string, number]> = [];
  if (f.body !== undefined) wanted.push([f.body, '--body', 'body', LOCAL_LIMITS.body]);
  const image = (v: string | undefined, flag: string, field: string): void => {
    if (v !== undefined && !isHttpUrl(v)) wanted.push([v, flag, field, LOCAL_LIMITS.image]);
  };
  image(f.image, '--image', 'image');
  image(f.imageTail, '--image-tail', 'image_tail');
  image(f.staticMask, '--static-mask', 'static_mask');
  for (const m of f.dynamicMask ?? []) image(m.source, '--dynamic-mask', 'dynamic_masks');
  const files = new Map<string, Buffer | Error>();
  for (const [path, flag, field, limit] of wanted) {
    if (files.has(path)) continue;
    try {
      files.set(path, await readLocalFile(path, { flag, field, limit, signal }));
    } catch (e) {
      if (!(e instanceof UsageError)) throw e; // Ctrl-C
      // Too large, or a directory: reported as such. Other failures (missing file…) by buildI2vBody's read.
      if (e.code === 'file_too_large' || /is a directory/.test(e.message)) files.set(path, e);
    }
  }
  return (path) => {
    const v = files.get(path);
    if (v instanceof Error) throw v;
    return v ?? readFileSync(path);
  };
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
  set('cfg_scale', f.cfgScale);
  if (f.staticMask !== undefined) {
    set('static_mask', imageSource('--static-mask', 'static_mask', f.staticMask, img));
  }
  if (f.dynamicMask !== undefined && f.dynamicMask.length > 0) {
    set(
      'dynamic_masks',
      f.dynamicMask.map(({ source, trajectories }) => ({
        mask: imageSource('--dynamic-mask', 'dynamic_masks', source, img),
        trajectories,
      })),
    );
  }
  set('camera_control', f.camera);
  set('sound', f.sound);
  if (f.voice !== undefined && f.voice.length > 0) set('voice_list', f.voice);
  set('watermark_info', f.watermarkInfo);
  set('callback_url', f.callbackUrl);
  set('external_task_id', f.externalTaskId);
  return body;
}
