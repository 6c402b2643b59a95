/** Where `npm start`'s bundle of the gateway is written (see start-bundle.mjs). */
export const GATEWAY_BUNDLE: string;
/** Builds the gateway's bundle unless it matches its inputs (see start-bundle.mjs). */
export function buildGatewayBundle(options?: {
  readonly force?: boolean;
}): Promise<{ readonly file: string; readonly built: boolean; readonly ms: number }>;
