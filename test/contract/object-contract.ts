/**
 * Object store contract: immutable blobs with ranged reads, idempotent deletes and prefix listing
 * in key order with cursors.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { ObjectInfo, ObjectStore } from '../../lib/ports/index.js';
import { ObjectNotFoundError } from '../../lib/ports/index.js';
import { SluiceError } from '../../protocol/errors.js';
import type { FixtureRef } from './storage-contract.js';

const notFound = async (promise: Promise<unknown>): Promise<ObjectNotFoundError> => {
  const error = await promise.then(
    () => new Error('expected ObjectNotFoundError'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ObjectNotFoundError);
  expect(error).toBeInstanceOf(SluiceError);
  return error as ObjectNotFoundError;
};

const listAll = async (store: ObjectStore, prefix: string, limit?: number) => {
  const pages: ObjectInfo[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(prefix, {
      ...(cursor === undefined ? {} : { cursor }),
      ...(limit === undefined ? {} : { limit }),
    });
    pages.push(page.objects);
    cursor = page.cursor;
  } while (cursor !== undefined && pages.length < 100);
  return { pages, objects: pages.flat() };
};

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** Runs `task` over `items` with at most `width` in flight. */
const inParallel = async <T>(items: readonly T[], width: number, task: (item: T) => Promise<void>) => {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) await task(items[i] as T);
  };
  await Promise.all(Array.from({ length: width }, worker));
};

export const objectStoreContract = (fixture: FixtureRef): void => {
  const run = randomUUID().slice(0, 8);
  const key = (name: string): string => `contract/${run}/${name}`;
  const store = (): ObjectStore => fixture().objects;

  // First, as the slowest test on s3rver (a few hundred PUTs a second at best), so the others run
  // alongside it; its own timeout allows for a busy machine.
  it('lists thousands of keys under a prefix in key order, page by page', async () => {
    const prefix = key('many/');
    // Folders of 100: s3rver re-reads a key's directory on every delete, so one flat folder of
    // thousands of keys makes cleanup quadratic. Listing still spans folders in key order.
    const names = Array.from(
      { length: 2500 },
      (_, n) => `${prefix}${pad(Math.floor(n / 100), 2)}/${pad(n, 5)}`,
    );
    const sizeOf = (n: number): number => n % 7;
    const started = Date.now();
    await inParallel([...names.keys()], 32, (n) => store().put(names[n] ?? '', new Uint8Array(sizeOf(n))));
    await store().put(key('many-other/x'), new Uint8Array(1));
    await store().put(key('man'), new Uint8Array(1));

    const { pages, objects } = await listAll(store(), prefix);
    expect(objects.map((o) => o.key)).toEqual(names);
    expect(pages.map((p) => p.length).slice(0, 3)).toEqual([1000, 1000, 500]);
    expect(objects.map((o) => o.size)).toEqual(names.map((_, n) => sizeOf(n)));
    expect(
      objects.every((o) => o.lastModified >= started - 60_000 && o.lastModified <= Date.now() + 60_000),
    ).toBe(true);

    const small = await listAll(store(), `${prefix}00/`, 30);
    expect(small.objects.map((o) => o.key)).toEqual(names.slice(0, 100));
    expect(small.pages.slice(0, 4).map((p) => p.length)).toEqual([30, 30, 30, 10]);

    // More than one DeleteObjects request's worth.
    await store().delete(names.slice(0, 1200));
    const left = await listAll(store(), prefix);
    expect(left.objects.map((o) => o.key)).toEqual(names.slice(1200));
  }, 180_000);

  it('round-trips bytes and reads ranges, truncating at the end', async () => {
    const body = new Uint8Array(300_000).map((_, i) => (i * 7) % 256);
    await store().put(key('data'), body);
    expect(Buffer.from(await store().get(key('data'))).equals(body)).toBe(true);
    const middle = await store().get(key('data'), { start: 1000, end: 1010 });
    expect([...middle]).toEqual([...body.slice(1000, 1010)]);
    const tail = await store().get(key('data'), { start: 299_990, end: 400_000 });
    expect([...tail]).toEqual([...body.slice(299_990)]);
    expect((await store().get(key('data'), { start: 300_000, end: 300_100 })).length).toBe(0);
    expect((await store().get(key('data'), { start: 5, end: 5 })).length).toBe(0);
    const empty = new Uint8Array(0);
    await store().put(key('empty'), empty);
    expect((await store().get(key('empty'))).length).toBe(0);
  });

  it('reports a missing key as ObjectNotFoundError, with or without a range', async () => {
    expect((await notFound(store().get(key('absent')))).key).toBe(key('absent'));
    await notFound(store().get(key('absent'), { start: 0, end: 10 }));
  });

  it('deletes idempotently', async () => {
    await store().put(key('gone'), new Uint8Array([1]));
    await store().put(key('kept'), new Uint8Array([2]));
    await store().delete([key('gone'), key('never-existed')]);
    await notFound(store().get(key('gone')));
    await store().delete([key('gone')]);
    await store().delete([]);
    expect([...(await store().get(key('kept')))]).toEqual([2]);
  });
};
