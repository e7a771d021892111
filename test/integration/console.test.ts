/**
 * The web console in a real browser: Debian's Chromium driven by playwright-core, against the local
 * stack (the same gateway `npm start` runs, serving /console). Every page renders data from the live
 * stack; the message browser finds records by offset and by timestamp; the lag chart moves when a
 * consumer falls behind; a connector is paused from the page; no console errors; every control is
 * labelled, reachable by keyboard and has readable contrast. With SLUICE_CONSOLE_SCREENSHOTS=<dir>
 * it also writes a screenshot of each page there (docs/console.md's images) and prints the first
 * load's bytes and time.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topology as wordCount } from '../../examples/word-count.js';
import { createAwsClients } from '../../lib/adapters/aws/clients.js';
import { DynamoMetadataStore } from '../../lib/adapters/aws/dynamodb-metadata-store.js';
import { SluiceClient } from '../../sdk/index.js';
import { parseStreamsConfig } from '../../streams/runtime/config.js';
import { KafkaStreams } from '../../streams/runtime/kafka-streams.js';
import { MetadataStateBackend } from '../../streams/state/metadata-backend.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

const CHROMIUM = '/usr/bin/chromium';

// The callbacks given to page.evaluate run in the browser; the project's types have no DOM library.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Dom = any;
declare const document: Dom, location: Dom, getComputedStyle: Dom, performance: Dom;
const shots = process.env['SLUICE_CONSOLE_SCREENSHOTS'];

let t: TestStack;
let browser: Browser;
let page: Page;
let profile: string;
const errors: string[] = [];
let firstProduce = 0;
let streams: KafkaStreams | undefined;

const shoot = async (name: string): Promise<void> => {
  if (shots) await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
};

/** Navigates by hash and waits for the page to finish rendering (main[data-page]). */
const open = async (hash: string, page_: string): Promise<void> => {
  await page.evaluate((h) => (location.hash = h), hash);
  await page.waitForSelector(`main[data-page="${page_}"]`, { timeout: 10_000 });
};

const heartbeat = async (group: string, body: Record<string, unknown>) => {
  const r = await t.call('POST', `/v1/groups/${group}/heartbeat`, body);
  expect(r.status).toBe(200);
  return r.json as { memberId: string; memberEpoch: number };
};

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get install chromium (.ci/run does)`);
  t = await startTestStack();
  // segment.bytes at its minimum: each batch fills a segment, so maintenance rolls both into the
  // segment store and the topic page has rolled segments to show (and the browser reads from them).
  const created = await t.call('POST', '/v1/topics', {
    name: 'orders',
    partitions: 2,
    configs: { 'segment.bytes': '14' },
  });
  expect(created.status).toBe(201);
  firstProduce = Date.now();
  for (const range of [
    [0, 3],
    [3, 5],
  ]) {
    const produced = await t.call('POST', '/v1/topics/orders/records', {
      records: Array.from({ length: range[1]! - range[0]! }, (_, j) => {
        const i = range[0]! + j;
        return {
          key: `k${i}`,
          value: { order: i, item: `widget-${i}` },
          headers: [{ key: 'trace', value: `t${i}` }],
          partition: 0,
          timestamp: firstProduce + i * 1000,
        };
      }),
      encoding: 'json',
    });
    expect(produced.status).toBe(200);
  }
  await t.stack.runMaintenance();
  const connector = await t.call('POST', '/v1/connect/connectors', {
    name: 'archive',
    config: {
      'connector.class': 'S3SinkConnector',
      topics: 'orders',
      's3.bucket.name': 'archive',
      'flush.size': '100',
    },
  });
  expect(connector.status).toBe(201);
  profile = await mkdtemp(join(tmpdir(), 'sluice-console-chromium-'));
  // launch() gives every run a fresh temporary profile; --user-data-dir is its to set.
  browser = await chromium.launch({
    executablePath: CHROMIUM,
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
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
  });
}, 120_000);

afterAll(async () => {
  await streams?.close();
  await browser?.close();
  await t?.stack.stop();
  if (profile) await rm(profile, { recursive: true, force: true });
});

describe('web console', () => {
  it('loads the cluster page first, small and fast, with the stores of the live stack', async () => {
    const start = Date.now();
    const response = await page.goto(`${t.url}/console`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    expect(page.url()).toBe(`${t.url}/console/`);
    await page.waitForSelector('main[data-page="cluster"]');
    const elapsed = Date.now() - start;
    const bytes = await page.evaluate(() =>
      [
        ...(performance.getEntriesByType('navigation') as Dom[]),
        ...(performance.getEntriesByType('resource') as Dom[]),
      ].reduce((n: number, e: Dom) => n + e.encodedBodySize, 0),
    );
    if (shots) console.log(`console first load: ${bytes} bytes, ${elapsed} ms to the rendered cluster page`);
    expect(bytes).toBeGreaterThan(10_000);
    expect(bytes).toBeLessThan(150_000);
    const cluster = (await t.call('GET', '/v1/cluster')).json as {
      clusterId: string;
      stores: { id: string }[];
    };
    const text = await page.textContent('main');
    expect(text).toContain(cluster.clusterId);
    for (const store of cluster.stores) expect(text).toContain(store.id);
    expect(await page.locator('main table tbody tr').count()).toBe(cluster.stores.length);
    expect(await page.getAttribute('nav a[href="#/cluster"]', 'aria-current')).toBe('page');
    await shoot('cluster');
  });

  it('lists topics and shows a topic with leader, ISR, OSR, LEO, HW and log start per partition', async () => {
    await open('#/topics', 'topics');
    expect(await page.locator('main tbody tr').allTextContents()).toEqual(['orders21']);
    await shoot('topics');
    await page.click('main a[href="#/topics/orders"]');
    await page.waitForSelector('main[data-page="topics"] table');
    await page.waitForFunction(() => document.querySelector('h1')?.textContent === 'Topic orders');
    const topic = (await t.call('GET', '/v1/topics/orders')).json as {
      partitions: { leader: string; highWatermark: number }[];
    };
    const segments = (await t.call('GET', '/v1/topics/orders/segments')).json as {
      partitions: { sizeBytes: number; segments: { sizeBytes: number; rolledAt?: number }[] }[];
    };
    const size0 = segments.partitions[0]!.sizeBytes;
    expect(size0).toBeGreaterThan(100);
    expect(size0).toBeLessThan(1024);
    const rows = await page
      .locator('main table')
      .first()
      .locator('tbody tr')
      .evaluateAll((trs: Dom[]) =>
        trs.map((tr: Dom) => [...tr.querySelectorAll('td')].map((td: Dom) => td.textContent)),
      );
    expect(rows).toEqual([
      [
        '0',
        topic.partitions[0]!.leader,
        '0',
        topic.partitions[0]!.leader,
        topic.partitions[0]!.leader,
        '—',
        '5',
        '5',
        '0',
        `${size0} B`,
      ],
      [
        '1',
        topic.partitions[1]!.leader,
        '0',
        topic.partitions[1]!.leader,
        topic.partitions[1]!.leader,
        '—',
        '0',
        '0',
        '0',
        '0 B',
      ],
    ]);
    // Segments: maintenance rolled partition 0's first batch into the segment store; the second is the
    // open (active) segment, rolled once segment.ms passes or a later batch closes it.
    const segmentRows = await page
      .locator('#segments table')
      .first()
      .locator('tbody tr')
      .evaluateAll((trs: Dom[]) =>
        trs.map((tr: Dom) => [...tr.querySelectorAll('td')].map((td: Dom) => td.textContent)),
      );
    const [first, second] = segments.partitions[0]!.segments;
    expect(segmentRows).toEqual([
      [
        '0',
        '3',
        '3',
        '1',
        `${first!.sizeBytes} B`,
        new Date(firstProduce).toISOString(),
        new Date(firstProduce + 2000).toISOString(),
        'remote (segment store)',
        new Date(first!.rolledAt!).toISOString(),
      ],
      [
        '3',
        '5',
        '2',
        '1',
        `${second!.sizeBytes} B`,
        new Date(firstProduce + 3000).toISOString(),
        new Date(firstProduce + 4000).toISOString(),
        'local (active)',
        '—',
      ],
    ]);
    expect(await page.textContent('#segments table:nth-of-type(2) caption')).toBe(
      'Partition 1: 0 segment(s), 0 B, offsets 0–0',
    );
    expect(await page.textContent('main')).toContain('retention.ms');
    await shoot('topic');
  });

  it('finds a record by offset, shows key, headers and the value as JSON and hex', async () => {
    await open('#/messages?topic=orders&partition=0&by=offset&at=3&view=json', 'messages');
    const rows = page.locator('#records tbody tr');
    expect(await rows.count()).toBe(2);
    const first = await rows.first().locator('td').allTextContents();
    expect(first[0]).toBe('3');
    expect(first[1]).toBe(new Date(firstProduce + 3000).toISOString());
    expect(first[2]).toBe('k3');
    expect(first[3]).toBe('trace: t3');
    expect(JSON.parse(first[4]!)).toEqual({ order: 3, item: 'widget-3' });
    await shoot('messages');
    await open('#/messages?topic=orders&partition=0&by=offset&at=4&view=hex', 'messages');
    const hex = Buffer.from(JSON.stringify({ order: 4, item: 'widget-4' }))
      .toString('hex')
      .replace(/(..)(?!$)/g, '$1 ');
    expect(await page.locator('#records tbody tr td').nth(4).textContent()).toBe(hex);
  });

  it('finds a record by timestamp through the form (ListOffsets) and produces one from the form', async () => {
    await open('#/messages?topic=orders', 'messages');
    await page.check('input[name="by"][value="timestamp"]');
    await page.fill('#browse-at', new Date(firstProduce + 1500).toISOString());
    await page.selectOption('#browse-view', 'text');
    await page.click('#browse button[type="submit"]');
    await page.waitForSelector('main[data-page="messages"] #records tbody tr');
    const offsets = await page.locator('#records tbody tr td:first-child').allTextContents();
    expect(offsets).toEqual(['2', '3', '4']);
    await page.fill('#produce-partition', '1');
    await page.fill('#produce-key', 'from-console');
    await page.fill('#produce-value', 'hello <b>console</b>');
    await page.fill('#produce-headers', 'source=console');
    await page.click('#produce button[type="submit"]');
    await expect.poll(() => page.textContent('#produce-result')).toBe('Written to partition 1 at offset 0.');
    const fetched = await t.call('GET', '/v1/topics/orders/partitions/1/records?offset=0');
    expect(fetched.json.records).toEqual([
      expect.objectContaining({
        offset: 0,
        key: 'from-console',
        value: 'hello <b>console</b>',
        headers: [{ key: 'source', value: 'console' }],
      }),
    ]);
    await open('#/messages?topic=orders&partition=1&by=offset&at=0&view=text', 'messages');
    // Markup in a value is shown as text, never parsed.
    expect(await page.locator('#records b').count()).toBe(0);
    expect(await page.locator('#records tbody td').nth(4).textContent()).toBe('hello <b>console</b>');
  });

  it('shows a group with members, assignments, committed offsets, and a lag chart that moves', async () => {
    const joined = await heartbeat('billing', {
      memberId: null,
      memberEpoch: 0,
      subscribedTopics: ['orders'],
    });
    const commit = await t.call('POST', '/v1/groups/billing/offsets', {
      memberId: joined.memberId,
      memberEpoch: joined.memberEpoch,
      offsets: [
        { topic: 'orders', partition: 0, offset: 5, metadata: '' },
        { topic: 'orders', partition: 1, offset: 1, metadata: '' },
      ],
    });
    expect(commit.status).toBe(200);
    await open('#/groups', 'groups');
    expect((await page.locator('main tbody tr td').allTextContents()).slice(0, 1)).toEqual(['billing']);
    await shoot('groups');
    await open('#/groups/billing', 'groups');
    expect(await page.textContent('#lag-value')).toBe('0');
    expect(await page.textContent('main')).toContain(joined.memberId);
    expect(await page.locator('#lag-chart canvas').count()).toBe(1);
    // The consumer falls behind: 7 records arrive and nothing is committed.
    await t.call('POST', '/v1/topics/orders/records', {
      records: Array.from({ length: 7 }, (_, i) => ({ value: `late-${i}`, partition: 0 })),
    });
    await page.waitForFunction(() => document.getElementById('lag-value')?.textContent === '7', undefined, {
      timeout: 10_000,
    });
    // The chart's points: total lag from 0 (first refresh) to 7 (the latest), one point per refresh.
    const totals = (await page.getAttribute('#lag-chart', 'data-totals'))!.split(',').map(Number);
    expect(totals[0]).toBe(0);
    expect(totals.at(-1)).toBe(7);
    expect(Number(await page.getAttribute('#lag-chart', 'data-points'))).toBe(totals.length);
    const offsetRows = await page
      .locator('main section[aria-label="Committed offsets and lag"] tbody tr')
      .evaluateAll((trs: Dom[]) =>
        trs.map((tr: Dom) => [...tr.querySelectorAll('td')].map((td: Dom) => td.textContent)),
      );
    expect(offsetRows).toEqual([
      ['orders', '0', '5', '12', '7'],
      ['orders', '1', '1', '1', '0'],
    ]);
    await shoot('group');
    await heartbeat('billing', { memberId: joined.memberId, memberEpoch: -1 });
  });

  it('shows connectors with their tasks and pauses one from the page', async () => {
    await open('#/connectors', 'connectors');
    expect(await page.textContent('[data-connector-state="archive"]')).toBe('RUNNING');
    expect(await page.locator('main tbody tr').first().locator('td').allTextContents()).toEqual([
      'archive',
      'sink',
      'S3SinkConnector',
      'RUNNING',
      '0: UNASSIGNED',
      'Pause Resume Restart',
    ]);
    await page.click('button[aria-label="Pause archive"]');
    await page.waitForFunction(
      () => document.querySelector('[data-connector-state="archive"]')?.textContent === 'PAUSED',
      undefined,
      { timeout: 10_000 },
    );
    expect((await t.call('GET', '/v1/connect/connectors/archive/status')).json.connector.state).toBe(
      'PAUSED',
    );
    await shoot('connectors');
    await page.click('button[aria-label="Resume archive"]');
    await page.waitForFunction(
      () => document.querySelector('[data-connector-state="archive"]')?.textContent === 'RUNNING',
      undefined,
      { timeout: 10_000 },
    );
  });

  it('shows Streams applications, their tasks with owners, their stores and keys, and looks a key up', async () => {
    const client = new SluiceClient({ url: t.url });
    const admin = client.admin();
    await admin.createTopic({ name: 'text-input', partitions: 1 });
    await admin.createTopic({ name: 'word-counts', partitions: 1 });
    await client.producer().send({
      topic: 'text-input',
      messages: [{ value: 'hello world hello' }, { value: 'Sluice says hello' }],
    });
    const store = new DynamoMetadataStore({
      client: createAwsClients({ endpoints: { dynamodb: t.stack.endpoints.dynamodb } }).dynamodb,
      tableName: t.stack.tableName,
    });
    const config = parseStreamsConfig({
      'application.id': 'word-count',
      'bootstrap.servers': t.url,
      'commit.interval.ms': '100',
    });
    streams = new KafkaStreams({
      topology: wordCount(),
      config,
      client,
      state: new MetadataStateBackend(store, config.applicationId),
    });
    await streams.start();
    await expect
      .poll(
        async () =>
          (await t.call('GET', '/v1/streams/word-count/stores/counts-store/keys/hello')).json?.value,
        {
          timeout: 30_000,
          interval: 200,
        },
      )
      .toBe(3);
    const described = (await t.call('GET', '/v1/streams/word-count')).json as {
      tasks: { taskId: string; owner: string | null }[];
    };
    const member = (
      (await t.call('GET', '/v1/groups/word-count')).json as { members: { memberId: string }[] }
    ).members[0]!.memberId;
    expect(described.tasks.map((x) => [x.taskId, x.owner])).toEqual([
      ['0_0', member],
      ['1_0', member],
    ]);
    await open('#/streams', 'streams');
    expect((await page.locator('main tbody tr td').allTextContents()).slice(0, 1)).toEqual(['word-count']);
    await page.click('main a[href="#/streams/word-count"]');
    await page.waitForFunction(
      () => document.querySelector('h1')?.textContent === 'Streams application word-count',
    );
    const tables = page.locator('main table');
    const rows = async (i: number) =>
      tables
        .nth(i)
        .locator('tbody tr')
        .evaluateAll((trs: Dom[]) =>
          trs.map((tr: Dom) => [...tr.querySelectorAll('td')].map((td: Dom) => td.textContent)),
        );
    const tasks = await rows(0);
    expect(tasks.map((r: string[]) => [r[0], r[1], r[2], r[3]])).toEqual([
      ['0_0', '0', '0', member],
      ['1_0', '1', '0', member],
    ]);
    expect(await rows(1)).toEqual([['counts-store', 'key-value', '1', 'string', 'json']]);
    const keys = await page
      .locator('section[data-store="counts-store"] tbody tr')
      .evaluateAll((trs: Dom[]) =>
        trs.map((tr: Dom) => [...tr.querySelectorAll('td')].slice(0, 2).map((td: Dom) => td.textContent)),
      );
    expect(keys).toEqual([
      ['hello', '3'],
      ['says', '1'],
      ['sluice', '1'],
      ['world', '1'],
    ]);
    await page.selectOption('#lookup-store', 'counts-store');
    await page.fill('#lookup-key', 'world');
    await page.click('#lookup button[type="submit"]');
    await page.waitForSelector('#lookup-value');
    expect(await page.textContent('#lookup-value')).toBe('1');
    await shoot('streams');
  });

  it('labels every control, reaches them by keyboard and keeps text contrast at 4.5:1', async () => {
    for (const [hash, name] of [
      ['#/cluster', 'cluster'],
      ['#/topics/orders', 'topics'],
      ['#/messages?topic=orders&partition=0&at=0', 'messages'],
      ['#/groups/billing', 'groups'],
      ['#/connectors', 'connectors'],
      ['#/streams/word-count?store=counts-store&key=hello', 'streams'],
      ['#/credentials', 'credentials'],
    ] as const) {
      await open(hash, name);
      const unlabelled = await page.evaluate(() =>
        [...document.querySelectorAll('input, select, textarea, button')]
          .filter((el: Dom) => {
            const field = el as Dom;
            const named =
              (field.labels?.length ?? 0) > 0 ||
              el.getAttribute('aria-label') ||
              (el.tagName === 'BUTTON' && el.textContent?.trim());
            return !named;
          })
          .map((el: Dom) => el.outerHTML),
      );
      expect(unlabelled).toEqual([]);
      const lowContrast = await page.evaluate(() => {
        const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
        const lum = ([r, g, b]: number[]) =>
          [r!, g!, b!]
            .map((v) => v / 255)
            .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
            .reduce((n, v, i) => n + v * [0.2126, 0.7152, 0.0722][i]!, 0);
        const background = (el: Dom): number[] => {
          for (; el; el = el.parentElement) {
            const c = rgb(getComputedStyle(el).backgroundColor);
            if (c.length === 3 || (c.length === 4 && c[3]! > 0)) return c;
          }
          return [255, 255, 255];
        };
        const bad: string[] = [];
        for (const el of document.querySelectorAll(
          'a, th, td, label, button, dt, dd, p, h1, h2, caption, span',
        )) {
          if (!el.textContent?.trim() || (el as Dom).offsetParent === null) continue;
          const fg = lum(rgb(getComputedStyle(el).color));
          const bg = lum(background(el));
          const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
          if (ratio < 4.5) bad.push(`${el.tagName} "${el.textContent.slice(0, 30)}" ${ratio.toFixed(2)}`);
        }
        return bad;
      });
      expect(lowContrast).toEqual([]);
    }
    // Keyboard: from the top of a freshly loaded messages page, the first Tab lands on the skip link
    // and further Tabs reach the nav, every form control, Find and Produce.
    await open('#/messages?topic=orders', 'messages');
    await page.reload();
    await page.waitForSelector('main[data-page="messages"]');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    const reached = new Set<string>();
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      reached.add(
        await page.evaluate(() => {
          const el = document.activeElement;
          return el?.id || el?.getAttribute('href') || el?.textContent?.trim() || el?.tagName || '';
        }),
      );
    }
    for (const target of [
      '#/topics',
      '#/connectors',
      '#/streams',
      'browse-topic',
      'browse-partition',
      'browse-at',
      'Find',
      'produce-value',
      'Produce',
    ])
      expect(reached).toContain(target);
  });

  it('logged no console errors on any page', () => {
    expect(errors).toEqual([]);
  });
});
