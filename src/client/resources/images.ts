import {
  imageEditParamsSchema,
  imageGenerateParamsSchema,
  imagesResponseSchema,
  type ImageEditParams,
  type ImageGenerateParams,
  type ImagesResponse,
} from '../../contract/text.js';
import type { ApiResult, GatewayClient } from '../gateway-client.js';
import { postJson, validateBody, type CallOptions } from './typed-stream.js';

export type { ImageEditParams, ImageGenerateParams, ImagesResponse };

/** `POST /v1/images/generations`: images as URLs or base64, per `response_format` (common.md §4). */
export async function generate(
  client: GatewayClient,
  body: ImageGenerateParams,
  o: CallOptions = {},
): Promise<ApiResult<ImagesResponse>> {
  validateBody(client, imageGenerateParamsSchema, body);
  return postJson(client, '/v1/images/generations', body, imagesResponseSchema, o);
}

/**
 * `POST /v1/images/edits`. Input URLs must be public https (common.md §4 rule 3). An answer with no images is
 * the documented "no product": the input URL is not public or the model is not an edit model (§7).
 */
export async function edit(
  client: GatewayClient,
  body: ImageEditParams,
  o: CallOptions = {},
): Promise<ApiResult<ImagesResponse>> {
  validateBody(client, imageEditParamsSchema, body);
  return postJson(client, '/v1/images/edits', body, imagesResponseSchema, o);
}
