import { modelListSchema, type ModelList } from '../../contract/models.js';
import type { ApiResult, GatewayClient } from '../gateway-client.js';

/** `GET /v1/models`: the models visible to the token (common.md §4). */
export function list(client: GatewayClient, o: { signal?: AbortSignal } = {}): Promise<ApiResult<ModelList>> {
  return client.request({ method: 'GET', path: '/v1/models', schema: modelListSchema, signal: o.signal });
}
