import { FormData } from 'undici';
import {
  ALPHA_IMAGE2VIDEO_PATH,
  alphaEnvelopeSchema,
  alphaImage2VideoRequestSchema,
  alphaImage2VideoResponseSchema,
  type AlphaImage2VideoResponse,
} from '../../contract/alpha.js';
import { ResponseShapeError, errorFromBody } from '../errors.js';
import type { ApiResult, GatewayClient } from '../gateway-client.js';
import { requireValid } from '../validation.js';

export { ALPHA_IMAGE2VIDEO_PATH };

/** Options of `image2video`. */
export interface Image2VideoOptions {
  signal?: AbortSignal | undefined;
  /** Send `multipart/form-data` (which the document's machine-readable description declares) instead of JSON. */
  multipart?: boolean | undefined;
}

/**
 * The same fields as a multipart form: strings as they are, numbers and booleans as text, objects and arrays
 * JSON-encoded (a form field is text; the description declares a free-form object).
 */
export function toFormData(body: Record<string, unknown>): FormData {
  const form = new FormData();
  for (const [key, value] of Object.entries(body)) {
    if (value === undefined) continue;
    form.append(
      key,
      typeof value === 'string'
        ? value
        : typeof value === 'number' || typeof value === 'boolean'
          ? String(value)
          : JSON.stringify(value),
    );
  }
  return form;
}

/**
 * Checks an image-to-video body against every rule of the alpha contract: the body, or a RequestValidationError
 * naming the field and the rule. `image2video` calls it when the client validates; a program that must refuse bad
 * input before it has a client (a dry run) calls it itself and then sends with a client built with
 * `validate: false`.
 */
export function checkImage2Video(body: Record<string, unknown>): Record<string, unknown> {
  return requireValid(alphaImage2VideoRequestSchema, body);
}

/**
 * `POST /alpha/v1/videos/image2video` (alpha-image2video.md §4): creates a task, answers `data.task_id` with
 * `task_status` `submitted`. The body is checked first unless the client's validation is off. An answer whose
 * `code` is not 0 is a GatewayError carrying its `request_id`, whatever the HTTP status (§2.2, §7).
 */
export async function image2video(
  client: GatewayClient,
  body: Record<string, unknown>,
  o: Image2VideoOptions = {},
): Promise<ApiResult<AlphaImage2VideoResponse>> {
  const sent = client.validate ? checkImage2Video(body) : body;
  const common = {
    method: 'POST' as const,
    path: ALPHA_IMAGE2VIDEO_PATH,
    schema: alphaEnvelopeSchema,
    signal: o.signal,
  };
  const res = await client.request(
    o.multipart === true ? { ...common, form: toFormData(sent) } : { ...common, body: sent },
  );
  if (res.data.code !== 0) throw errorFromBody(res.status, JSON.stringify(res.data), res.requestId);
  const parsed = alphaImage2VideoResponseSchema.safeParse(res.data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ResponseShapeError(
      `POST ${ALPHA_IMAGE2VIDEO_PATH}: unexpected answer at ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`,
      { status: res.status, requestId: res.data.request_id ?? res.requestId },
    );
  }
  // Checked, but handed back as received (the schemas transform nothing): `--json` prints the answer unchanged.
  return { ...res, data: res.data as AlphaImage2VideoResponse };
}
