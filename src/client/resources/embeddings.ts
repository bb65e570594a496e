import {
  embeddingCreateParamsSchema,
  embeddingListSchema,
  type EmbeddingCreateParams,
  type EmbeddingList,
} from '../../contract/text.js';
import type { ApiResult, GatewayClient } from '../gateway-client.js';
import { postJson, validateBody, type CallOptions } from './typed-stream.js';

export type { EmbeddingCreateParams, EmbeddingList };

/** `POST /v1/embeddings`: vectors plus usage (common.md §4). Floats unless `encoding_format: 'base64'`. */
export async function create(
  client: GatewayClient,
  body: EmbeddingCreateParams,
  o: CallOptions = {},
): Promise<ApiResult<EmbeddingList>> {
  validateBody(client, embeddingCreateParamsSchema, body);
  return postJson(client, '/v1/embeddings', body, embeddingListSchema, o);
}

/** Decodes a base64 embedding (little-endian float32, wire-formats.md §4) into numbers. */
export function decodeBase64(b64: string): number[] {
  const bytes = Buffer.from(b64, 'base64');
  const out: number[] = [];
  for (let i = 0; i + 4 <= bytes.length; i += 4) out.push(bytes.readFloatLE(i));
  return out;
}

/** The vectors of an answer in input order, decoding base64 ones. */
export function vectors(list: EmbeddingList): number[][] {
  return [...list.data]
    .sort((a, b) => a.index - b.index)
    .map((d) => (typeof d.embedding === 'string' ? decodeBase64(d.embedding) : d.embedding));
}
