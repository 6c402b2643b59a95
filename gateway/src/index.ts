// @quarry/gateway: build a gateway in-process (embedding, tests) or run `server.ts`.
export { API_VERSION, createApp } from './app.js';
export { ConfigError, type GatewayConfig, loadConfig, redactedConfig } from './config.js';
export {
  assertPlugin,
  createPluginRegistry,
  loadPlugins,
  PluginLoadError,
  type PluginRegistry,
} from './connections/plugin-registry.js';
export { type CreateGatewayOptions, createGateway, type Gateway } from './create-gateway.js';
export { ApiError } from './errors/api-error.js';
export { ERROR_STATUS, type ErrorCode } from './errors/error-codes.js';
export { type Keyring, parseKeyring } from './security/keyring.js';
export type { GatewayServices } from './services/gateway-services.js';
