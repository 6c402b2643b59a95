// What a connection config points at, declared by its plugin (ConnectorPlugin.destinations), so
// the gateway can refuse a connection at creation with a clear answer, before any driver runs.
// Drivers check again, through the same guard, every time they open a session.
import type { DestinationGuard } from './destination-guard.js';

/** One thing of the outside world (or of the gateway host) a connection would use. */
export type Destination =
  /** A network host and port (a name or an IP literal). */
  | { readonly kind: 'host'; readonly host: string; readonly port: number }
  /** An `http:`/`https:` endpoint (its host and port are checked). */
  | { readonly kind: 'url'; readonly url: string }
  /** A unix-domain socket on the gateway host (a directory or the socket file). */
  | { readonly kind: 'socket'; readonly path: string }
  /** A file or directory on the gateway host. */
  | { readonly kind: 'file'; readonly path: string }
  /** The gateway host's own identity (ambient cloud credentials); `what` names it for messages. */
  | { readonly kind: 'identity'; readonly what: string };

/**
 * Checks every destination with `guard`; throws the first refusal (a ConnectorError, see
 * {@link isDestinationRefusal}) or an unresolvable host (`driverCode` `HOST_UNRESOLVABLE`).
 *
 * @example
 * await checkDestinations(plugin.destinations?.(config) ?? [], guard);
 */
export async function checkDestinations(
  destinations: readonly Destination[],
  guard: DestinationGuard,
): Promise<void> {
  for (const destination of destinations) {
    switch (destination.kind) {
      case 'host':
        await guard.checkHost(destination.host, destination.port);
        break;
      case 'url':
        await guard.checkUrl(destination.url);
        break;
      case 'socket':
        guard.checkSocket(destination.path);
        break;
      case 'file':
        guard.checkFile(destination.path);
        break;
      case 'identity':
        guard.checkIdentity(destination.what);
        break;
    }
  }
}
