// The parts of the official MCP SDK the sessions use, in one module that mcp-sessions.ts imports
// on the first MCP session only: the SDK, its zod schemas and Ajv take ~0.1 s to load, which a
// gateway start (and every instance that never sees an agent) no longer pays.
export { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
export { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
export {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
export { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
