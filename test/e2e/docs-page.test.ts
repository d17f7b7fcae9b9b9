/**
 * The interactive reference page, driven in headless Chromium (see test/support/chromium.ts for
 * which one): a developer authorizes with a key, runs "list pets" and "add a pet", and sees the
 * answers on the page. The screenshot is kept in test-results/ as a test artifact.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../shared/project-root';
import { chromiumToLaunch, launchChromium } from '../support/chromium';
import { startLocalApi, type LocalApi } from '../support/local-api';

export const SCREENSHOT = resolve(projectRoot, 'test-results/docs-page.png');

let api: LocalApi;
let browser: Browser;

beforeAll(async () => {
  api = await startLocalApi();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
});

/** The docs page, authorized with the key as a developer does it: Authorize, paste, Authorize, Close. */
const openAuthorized = async (page: Page): Promise<void> => {
  await page.goto(`${api.url}/docs`);
  await page.locator('.auth-wrapper button.authorize').click();
  await page.locator('.modal-ux input').first().fill(api.key);
  await page.locator('.modal-ux button.authorize[type="submit"]').click();
  await page.locator('.modal-ux button.btn-done').click();
};

describe('the docs page at /v1/docs', () => {
  it('authorizes with a key, runs "list pets" and shows the answer', async () => {
    const created = await api.petStore.pets.create({ name: 'Whiskers-from-the-docs', categoryId: 3 });
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await openAuthorized(page);

    const operation = page.locator('#operations-animals-listPets');
    await operation.locator('.opblock-summary').click();
    // The page opens operations ready to try (tryItOutEnabled): Execute is there at once.
    await operation.locator('button.execute').click();

    const liveResponse = operation.locator('.live-responses-table .response');
    await expect.poll(() => liveResponse.locator('.response-col_status').first().innerText(), { timeout: 15_000 }).toContain('200');
    const shown = await liveResponse.locator('.response-col_description').first().innerText();
    expect(shown).toContain('Whiskers-from-the-docs');
    expect(shown).toContain(String(created.id));

    mkdirSync(resolve(projectRoot, 'test-results'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    // Everything the page loaded came from this server: no CDN.
    const origin = new URL(api.url).origin;
    expect(requests.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'))).toEqual([]);
    await page.close();
  });

  it('makes a new pet at each Execute of "add a pet": nothing pre-fills the Idempotency-Key', async () => {
    const page = await browser.newPage();
    await openAuthorized(page);
    const operation = page.locator('#operations-animals-createPet');
    await operation.locator('.opblock-summary').click();

    const execute = async () => {
      const answer = page.waitForResponse(
        (response) => response.request().method() === 'POST' && new URL(response.url()).pathname === '/v1/pets',
      );
      await operation.locator('button.execute').click();
      const response = await answer;
      return { status: response.status(), headers: response.headers(), pet: (await response.json()) as { id: number } };
    };
    const first = await execute();
    const second = await execute();

    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.pet.id).not.toBe(first.pet.id);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    // The page shows the second answer, with its own id.
    const shown = operation.locator('.live-responses-table .response .response-col_description').first();
    await expect.poll(() => shown.innerText(), { timeout: 15_000 }).toContain(String(second.pet.id));
    await page.close();
  });

  it('serves the document it renders, listing this server first', async () => {
    const response = await fetch(`${api.url}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as { openapi: string; servers: Array<{ url: string }> };
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers[0]?.url).toBe('/v1');
  });
});

describe('the Chromium the page is driven in', () => {
  const nowhere = () => false;

  it('is $CHROMIUM_PATH when set', async () => {
    expect((await chromiumToLaunch({ CHROMIUM_PATH: '/opt/chrome/chrome' }, () => true)).executablePath).toBe('/opt/chrome/chrome');
  });

  it("is Debian's /usr/bin/chromium when installed", async () => {
    expect((await chromiumToLaunch({}, (path) => path === '/usr/bin/chromium')).executablePath).toBe('/usr/bin/chromium');
  });

  it('is the one in the npm packages otherwise (Linux x64), extracted; elsewhere a clear request for CHROMIUM_PATH', async () => {
    if (process.platform !== 'linux' || process.arch !== 'x64') {
      await expect(chromiumToLaunch({}, nowhere)).rejects.toThrow('set CHROMIUM_PATH');
      return;
    }
    const { executablePath } = await chromiumToLaunch({}, nowhere);
    expect(executablePath).not.toBe('/usr/bin/chromium');
    expect(existsSync(executablePath)).toBe(true);
  });
});
