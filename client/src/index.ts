// @quarry/client: the typed client for a Quarry gateway. The React hook lives at
// `@quarry/client/react`; the `quarry` CLI is this package's bin.
export {
  ConflictError,
  ForbiddenError,
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  NetworkError,
  NotFoundError,
  OAuthError,
  QuarryError,
  type QuarryErrorDetail,
  type QuarryErrorInit,
  QueryTimeoutError,
  QuotaExceededError,
  RateLimitError,
  SourceUnavailableError,
  TimeoutError,
  UnauthenticatedError,
  UpstreamError,
} from './errors.js';
export type { OAuthCredentials } from './oauth-token-source.js';
export {
  type CallOptions,
  createQuarryClient,
  type PeriodOptions,
  type QuarryClient,
  type QuarryClientConfig,
  type QuarryClientOptions,
  type QueryOptions,
} from './quarry-client.js';
export { DEFAULT_RETRY, type RetryOptions } from './retry-policy.js';
export type {
  Account,
  Analytic,
  AnalyticDefinition,
  ApiKey,
  CallTotals,
  Column,
  DeployOutcome,
  DeployResult,
  IssuedApiKey,
  NewApiKey,
  QueryMeta,
  QueryParams,
  QueryResult,
  QueryStringParams,
  QueryStringValue,
  Scope,
  Statement,
  StatementAmounts,
  Usage,
} from './types.js';
