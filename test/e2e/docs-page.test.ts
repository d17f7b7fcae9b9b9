/**
 * The interactive reference page, driven in headless Chromium (Debian's, through playwright-core):
 * a developer authorizes with a key, runs "list pets", and sees the answer on the page.
 * The screenshot is kept in test-results/ as a test artifact.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../infra/project';
import { postPet, startLocalApi, type LocalApi } from '../support/local-api';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOT = resolve(projectRoot, 'test-results/docs-page.png');

let api: LocalApi;
let browser: Browser;

beforeAll(async () => {
  api = await startLocalApi();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // This machine's network is closed: keep Chromium from calling home.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe('the docs page at /v1/docs', () => {
  it('authorizes with a key, runs "list pets" and shows the answer', async () => {
    const created = (await (await postPet(api, { name: 'Whiskers-from-the-docs', categoryId: 3 })).json()) as { id: number };
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(`${api.url}/docs`);

    await page.locator('.auth-wrapper button.authorize').click();
    await page.locator('.modal-ux input').first().fill(api.key);
    await page.locator('.modal-ux button.authorize[type="submit"]').click();
    await page.locator('.modal-ux button.btn-done').click();

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

  it('serves the document it renders, listing this server first', async () => {
    const response = await fetch(`${api.url}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as { openapi: string; servers: Array<{ url: string }> };
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers[0]?.url).toBe('/v1');
  });
});
