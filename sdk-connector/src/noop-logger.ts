// A logger that drops everything: the default when a caller gives none.
import type { ConnectorLogger } from './connector-plugin.js';

/** A {@link ConnectorLogger} that discards every entry. */
export const noopLogger: ConnectorLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
