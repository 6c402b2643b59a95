// Debian's Chromium driven by playwright-core (Playwright's own browser download cannot work
// here: `.ci/run` installs `chromium` with apt-get when it is missing). Each launch runs headless
// in a fresh temporary profile (Playwright creates and removes its user-data-dir), with the
// background services that would reach the network switched off.
import { access, constants } from 'node:fs/promises';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.QUARRY_TEST_CHROMIUM ?? '/usr/bin/chromium';

const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** `true` when the Chromium binary is there, else why not (for serviceUp). */
export async function chromiumAvailable(): Promise<true | string> {
  try {
    await access(CHROMIUM_PATH, constants.X_OK);
    return true;
  } catch {
    return `Chromium is not installed at ${CHROMIUM_PATH} (apt-get install chromium)`;
  }
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ARGS });
}
