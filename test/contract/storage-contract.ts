/**
 * The one contract every storage adapter passes: the memory adapters define the semantics, the AWS
 * adapters must match them on DynamoDB Local and s3rver (and on AWS itself).
 */
import { afterAll, beforeAll, describe } from 'vitest';
import type { MetadataStore, ObjectStore } from '../../lib/ports/index.js';
import { metadataStoreContract } from './metadata-contract.js';
import { objectStoreContract } from './object-contract.js';

export interface StorageFixture {
  metadata: MetadataStore;
  objects: ObjectStore;
  close?: () => Promise<void>;
}

/** Gives each test a handle on stores that stay the same for the whole suite. */
export type FixtureRef = () => StorageFixture;

/** Registers the whole contract for the stores `open` builds (called once, before the tests). */
export const registerStorageContract = (name: string, open: () => Promise<StorageFixture>): void => {
  // Concurrent: every test owns its keys, real stores are shared by concurrent callers anyway, and the
  // slow emulator tests overlap instead of adding up.
  describe.concurrent(`storage contract: ${name}`, () => {
    let fixture: StorageFixture | undefined;
    beforeAll(async () => {
      fixture = await open();
    });
    afterAll(async () => {
      await fixture?.close?.();
    });
    const ref: FixtureRef = () => {
      if (fixture === undefined) throw new Error('storage fixture is not open');
      return fixture;
    };
    describe('object store', () => objectStoreContract(ref));
    describe('metadata store', () => metadataStoreContract(ref));
  });
};
