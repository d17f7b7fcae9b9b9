/**
 * The headless Chromium the browser tests drive (through playwright-core, which downloads no
 * browser): $CHROMIUM_PATH when set, else Debian's /usr/bin/chromium, else the one the
 * `@sparticuz/chromium` dev dependency ships, so `npm ci && npm test` needs no system browser.
 */
import { existsSync } from 'node:fs';
import sparticuz from '@sparticuz/chromium';
import { chromium, type Browser } from 'playwright-core';

const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/** This machine's network may be closed, and a test has no business calling out: keep Chromium from calling home. */
const QUIET = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Which Chromium to run, and with which extra arguments. */
export const chromiumToLaunch = async (
  env: Readonly<Record<string, string | undefined>> = process.env,
  exists: (path: string) => boolean = existsSync,
): Promise<{ readonly executablePath: string; readonly args: readonly string[] }> => {
  const chosen = env.CHROMIUM_PATH || (exists(SYSTEM_CHROMIUM) ? SYSTEM_CHROMIUM : undefined);
  if (chosen !== undefined) return { executablePath: chosen, args: ['--no-sandbox', ...QUIET] };
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `No Chromium for ${process.platform}-${process.arch} in the npm packages: set CHROMIUM_PATH to a Chromium or Chrome executable.`,
    );
  }
  // The packaged build is extracted to the temporary folder on first use; its args are the ones it
  // is built to run with, but for --single-process (made for Lambda), with which closing a page's
  // context ends the whole browser.
  const args = sparticuz.args.filter((arg) => arg !== '--single-process');
  return { executablePath: await sparticuz.executablePath(), args: [...args, ...QUIET] };
};

export const launchChromium = async (): Promise<Browser> => {
  const { executablePath, args } = await chromiumToLaunch();
  return chromium.launch({ executablePath, headless: true, args: [...args] });
};
