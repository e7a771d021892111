/**
 * Request and capacity counters kept by the storage adapters, so benchmarks can report S3 requests and
 * DynamoDB units per MiB and turn them into dollars. Units follow DynamoDB's billing: a write unit per
 * started KiB of the larger item image (2x inside transactions: the Developer Guide's "Capacity
 * management for transactions" says DynamoDB performs two underlying writes of every item in a
 * TransactWriteItems, so a ConditionCheck is billed here as a transactional write of the item it
 * checks, the conservative reading), a strongly consistent read unit per started 4 KiB (half for
 * eventually consistent reads).
 */
import type { AttributeValue } from './metadata-store.js';

export interface MeterReading {
  objectPuts: number;
  objectPutBytes: number;
  objectGets: number;
  objectGetBytes: number;
  objectLists: number;
  objectDeletes: number;
  metadataReads: number;
  metadataWrites: number;
  readUnits: number;
  writeUnits: number;
}

export class StorageMeter {
  private counts: MeterReading = StorageMeter.zero();

  static zero(): MeterReading {
    return {
      objectPuts: 0,
      objectPutBytes: 0,
      objectGets: 0,
      objectGetBytes: 0,
      objectLists: 0,
      objectDeletes: 0,
      metadataReads: 0,
      metadataWrites: 0,
      readUnits: 0,
      writeUnits: 0,
    };
  }

  add(delta: Partial<MeterReading>): void {
    for (const [k, v] of Object.entries(delta) as [keyof MeterReading, number][]) this.counts[k] += v;
  }

  read(): MeterReading {
    return { ...this.counts };
  }

  reset(): void {
    this.counts = StorageMeter.zero();
  }
}

/** DynamoDB's item size: attribute names plus values (numbers approximated at 1 byte per 2 digits + 1). */
export const itemSize = (item: { [name: string]: AttributeValue }): number =>
  Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueSize(value), 0);

const valueSize = (value: AttributeValue): number => {
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number')
    return Math.ceil(String(Math.abs(value)).replace(/[.-]/g, '').length / 2) + 1;
  if (value instanceof Uint8Array) return value.length;
  if (Array.isArray(value)) return 3 + value.reduce<number>((s, v) => s + 1 + valueSize(v), 0);
  return 3 + Object.entries(value).reduce((s, [k, v]) => s + 1 + Buffer.byteLength(k) + valueSize(v), 0);
};

export const writeUnitsFor = (bytes: number): number => Math.max(1, Math.ceil(bytes / 1024));
export const readUnitsFor = (bytes: number, consistent: boolean): number =>
  Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);
