/**
 * gw as a library: the typed gateway client, its resources, the contract's schemas and the stream types, and the
 * engines that are libraries (`runLoad`, `runVideoLoad`, `mergeReports`, `compareReports`; `runBatch` and its
 * siblings). No CLI: nothing here prints or exits (the CLI is `bin/gw`).
 */
export { GatewayClient, buildQuery } from './client/gateway-client.js';
export type {
  GatewayClientOptions,
  ApiResult,
  StreamResult,
  RawResult,
  Exchange,
  PreparedRequest,
} from './client/gateway-client.js';
export {
  GatewayError,
  BadRequestError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  UnprocessableEntityError,
  RateLimitError,
  InternalServerError,
  ConnectionError,
  TimeoutError,
  UserAbortError,
  ResponseShapeError,
  TruncatedStreamError,
  RequestValidationError,
  TaskFailedError,
  errorFromBody,
  type AuthError,
  type ConnectionFailure,
  type GatewayErrorInit,
} from './client/errors.js';
export { normalizeBaseUrl, BaseUrlError } from './client/base-url.js';
export { poll, type PollOptions } from './client/poll.js';
export { decodeSse, type SseEvent } from './client/sse.js';
export * as models from './client/resources/models.js';
export * as chat from './client/resources/chat.js';
export * as responses from './client/resources/responses.js';
export * as messages from './client/resources/messages.js';
export * as embeddings from './client/resources/embeddings.js';
export * as images from './client/resources/images.js';
export * as videos from './client/resources/videos.js';
export * as alpha from './client/resources/alpha.js';
export * as betaTasks from './client/resources/beta-tasks.js';
export * as betaAssets from './client/resources/beta-assets.js';
export * as catalog from './contract/catalog.js';
export * as schemas from './contract/schemas.js';
export type { TypedStream } from './client/resources/typed-stream.js';
export { runLoad, type LoadOptions, type LoadProgress } from './load/run.js';
export type { LoadPlanInput, LoadPlan } from './load/plan.js';
export type { Outcome as LoadRequestOutcome } from './load/exchange.js';
export {
  runVideoLoad,
  videoPricing,
  type VideoLoadOptions,
  type VideoPlan,
  type CreatedVideo,
} from './load/video.js';
export { mergeReports } from './load/merge.js';
export { compareReports, type Comparison, type ComparisonRow } from './load/compare.js';
export { parseExpr, type Expr } from './load/expr.js';
export { checkReport, type RunReport, type StepReport, type VideoFigures } from './load/schema.js';

// The batch engine as a library: options objects in, documents out; nothing printed.
export { runBatch, retryBatch } from './batch/session.js';
export { planBatch, type PlanBatchOptions, type BatchPlanDoc } from './batch/plan.js';
export { batchStatus, type StatusDoc } from './batch/status.js';
export { mergeBatches, type MergeOptions, type MergeReport } from './batch/merge.js';
export { downloadBatch, type DownloadBatchOptions, type DownloadBatchDoc } from './batch/download.js';
export { parseShard, shardOf, type Shard } from './batch/shard.js';
export type {
  RunBatchOptions,
  RetryBatchOptions,
  BatchRunDoc,
  BatchClock,
  BatchJournal,
  BatchSinks,
  ClientSource,
  JournaledCreate,
  JournaledKind,
  ResumeCommand,
  RunReason,
  RunStats,
} from './batch/options.js';
export type { OutputLine, SavedFile } from './batch/output.js';

// The probe as a library: runProbe(options) returns the report; nothing printed.
export {
  runProbe,
  askOf,
  type ProbeOptions,
  type ProbeSinks,
  type ClientFactory,
  type AllModelsSettings,
} from './probe/probe.js';
export {
  selectChecks,
  planModels,
  exitCodeOf,
  type ProbeReport,
  type CheckRecord,
  type CheckStatus,
  type CheckError,
  type ProbePlan,
  type ProbeAsk,
  type FailOn,
  type Selection,
} from './probe/runner.js';
export type { SloBounds } from './probe/slo.js';
export {
  baselineOfReport,
  compareWithBaseline,
  type BaselineRun,
  type BaselineDiff,
  type BaselineCell,
  type BaselineChange,
} from './probe/baseline.js';
export { probeReportSchema } from './probe/report-schema.js';
