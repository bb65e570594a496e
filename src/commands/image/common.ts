/**
 * Shared by `gw image generate` and `gw image edit`: the common flags, the request body, and the output: URLs one
 * per line, base64 images written as files that never overwrite an existing file unless `--force`.
 */
import { GwError } from '../../core/errors.js';
import type { ImagesResponse } from '../../contract/text.js';
import type { ApiResult } from '../../client/gateway-client.js';
import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import type { imageFlagFields } from './flags.js';
import { checkSaveDir } from '../../core/download.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { fsError } from '../../core/fs-errors.js';
import * as path from 'node:path';

/** Flags of both image commands, as parsed. */
export type ImageOptions = Flags<typeof imageFlagFields> & { image?: string[] };

/** The body fields both commands send; rules are checked by the contract (common.md §2.2). */
export function imageBody(
  prompt: string,
  o: Omit<ImageOptions, 'model'> & { model: string },
): { model: string; prompt: string; size?: string; n?: number; response_format?: 'url' | 'b64_json' } {
  const body: {
    model: string;
    prompt: string;
    size?: string;
    n?: number;
    response_format?: 'url' | 'b64_json';
  } = { model: o.model, prompt };
  if (o.size !== undefined) body.size = o.size;
  if (o.n !== undefined) body.n = o.n;
  // An unknown format is left for the contract to reject (or for --no-validate to send as it is).
  if (o.format !== undefined) body.response_format = o.format as 'url' | 'b64_json';
  return body;
}

function extension(bytes: Buffer): string {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpg';
  if (
    bytes.subarray(0, 4).toString('latin1') === 'RIFF' &&
    bytes.subarray(8, 12).toString('latin1') === 'WEBP'
  ) {
    return 'webp';
  }
  return 'bin';
}

/** Refuses (exit 2, before the billable request) an `--out` where the images could not be saved. */
export function checkImageOut(o: { out?: string | undefined }): void {
  if (o.out === undefined) return;
  checkSaveDir(o.out, '--out');
}

/** Writes one image as `<base>.<ext>`, or `<base>-2.<ext>`… when the name exists and `force` is off. */
export async function saveImage(dir: string, base: string, bytes: Buffer, force: boolean): Promise<string> {
  await mkdir(dir, { recursive: true });
  const ext = extension(bytes);
  for (let k = 1; ; k++) {
    const file = path.join(dir, k === 1 ? `${base}.${ext}` : `${base}-${k}.${ext}`);
    try {
      await writeFile(file, bytes, { flag: force ? 'w' : 'wx' });
      return file;
    } catch (e) {
      if ((e as { code?: unknown }).code === 'EEXIST') continue;
      throw fsError(e, { path: file, action: 'write' });
    }
  }
}

/**
 * Prints the result: with `--json` the body unchanged (base64 files are written only when `--out` is given);
 * otherwise URLs one per line and the paths of the written files. An answer without images is an error (exit 1)
 * whose hint is `noProduct`.
 */
export async function printImages(
  ctx: Context,
  res: ApiResult<ImagesResponse>,
  o: ImageOptions,
  noProduct: { message: string; hint: string },
): Promise<void> {
  const data = res.data.data ?? [];
  if (data.length === 0) {
    ctx.out.jsonOnly(res.data);
    throw new GwError(noProduct.message, {
      code: 'no_product',
      hint: noProduct.hint,
      requestId: res.requestId,
    });
  }
  const created = res.data.created ?? Math.floor(Date.now() / 1000);
  // Base64 images become files, except with --json and no --out (the document then carries them).
  const save = o.out !== undefined || !ctx.out.opts.json;
  const lines: string[] = [];
  for (const [i, img] of data.entries()) {
    if (img.b64_json !== undefined && save) {
      lines.push(
        await saveImage(
          o.out ?? '.',
          `image-${created}-${i + 1}`,
          Buffer.from(img.b64_json, 'base64'),
          o.force === true,
        ),
      );
    } else if (img.url !== undefined) lines.push(img.url);
  }
  await ctx.out.result(res.data, () => {
    for (const l of lines) ctx.out.line(l);
  });
}
