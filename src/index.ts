/** gw as a library: the typed gateway client and the contract. */
export { GatewayClient } from './client/gateway-client.js';
export type { GatewayClientOptions, ApiResult, StreamResult, Exchange } from './client/gateway-client.js';
export { GatewayError, AuthError, ResponseShapeError, ConnectionError } from './client/errors.js';
export { decodeSse, type SseEvent } from './client/sse.js';
export { main } from './cli.js';
