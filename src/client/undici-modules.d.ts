// Types for the undici modules undici-lite.ts loads directly (undici publishes types for its index only).
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const AgentImpl: typeof Agent;
  export default AgentImpl;
}
declare module 'undici/lib/dispatcher/dispatcher.js' {
  import type { Dispatcher } from 'undici';
  const DispatcherImpl: typeof Dispatcher;
  export default DispatcherImpl;
}
declare module 'undici/lib/api/index.js' {
  const api: Record<string, unknown>;
  export default api;
}
declare module 'undici/lib/interceptor/redirect.js' {
  import type { interceptors } from 'undici';
  const redirect: typeof interceptors.redirect;
  export default redirect;
}
declare module 'undici/lib/handler/wrap-handler.js' {
  import type { Dispatcher } from 'undici';
  /** Adapts a handler of undici's older callback API (onConnect, onHeaders …) to the current one. */
  const WrapHandler: {
    wrap(handler: Dispatcher.DispatchHandler): Dispatcher.DispatchHandler;
  };
  export default WrapHandler;
}
