/**
 * The console against a stack with IAM authorization (SLUICE_AUTH=iam): unsigned, the API refuses it;
 * with the user's access key entered on the Credentials page, every request is SigV4-signed in the
 * browser (console/sigv4.js, WebCrypto) and the pages show what that principal may see.
 */
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthStack } from './auth-stack.js';
import { API_ARN, invokePolicy, startAuthStack } from './auth-stack.js';

let a: AuthStack;
let browser: Browser;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  a = await startAuthStack([{ name: 'operator', policies: [invokePolicy([`${API_ARN}/*`])] }]);
  expect((await a.call('operator', 'POST', '/v1/topics', { body: { name: 'signed-topic' } })).status).toBe(
    201,
  );
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = await browser.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await a?.stop();
});

describe('web console with IAM authorization', () => {
  it('is refused unsigned, then signs with the credentials entered and shows the topics', async () => {
    await page.goto(`${a.stack.url}/console/#/topics`);
    await page.waitForSelector('main p.error');
    expect(await page.textContent('main p.error')).toMatch(/^SASL_AUTHENTICATION_FAILED|^HTTP 40[13]/);
    await page.click('nav a[href="#/credentials"]');
    await page.waitForSelector('main[data-page="credentials"]');
    const key = a.keys['operator']!;
    await page.fill('#cred-accessKeyId', key.accessKeyId);
    await page.fill('#cred-secretAccessKey', key.secretAccessKey);
    await page.fill('#cred-region', 'us-east-1');
    await page.click('#credentials button[type="submit"]');
    await page.waitForSelector('main[data-page="cluster"]');
    await page.click('nav a[href="#/topics"]');
    await page.waitForSelector('main[data-page="topics"]');
    expect(await page.locator('main tbody tr td:first-child').allTextContents()).toEqual(['signed-topic']);
    await page.goto(`${a.stack.url}/console/#/topics/signed-topic`);
    await page.waitForSelector('main[data-page="topics"]');
    expect(await page.textContent('h1')).toBe('Topic signed-topic');
    // A wrong secret is refused by the gateway's verifier: the signature is really checked.
    await page.goto(`${a.stack.url}/console/#/credentials`);
    await page.waitForSelector('main[data-page="credentials"]');
    await page.fill('#cred-secretAccessKey', 'wrong');
    await page.click('#credentials button[type="submit"]');
    await page.waitForSelector('main p.error');
    expect(await page.textContent('main p.error')).toMatch(/^SASL_AUTHENTICATION_FAILED|^HTTP 40[13]/);
    expect(errors).toEqual([]);
  });
});
