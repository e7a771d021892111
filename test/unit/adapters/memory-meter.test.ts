import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../lib/adapters/memory/metadata-store.js';

describe('MemoryMetadataStore meter: DynamoDB’s units for transactions', () => {
  it('bills a ConditionCheck as a transactional write of the item it checks', async () => {
    const store = new MemoryMetadataStore();
    await store.put({ pk: 'p', sk: 'checked', blob: 'x'.repeat(3000) });
    const before = store.meter.read();
    await store.transact([
      { put: { pk: 'p', sk: 'new', v: 1 }, condition: { notExists: 'pk' } },
      { check: { pk: 'p', sk: 'checked' }, condition: { exists: 'pk' } },
    ]);
    const after = store.meter.read();
    // The put: 2 × 1 unit; the check of a 3 KB item: 2 × 3 units. Only the put is a write.
    expect(after.writeUnits - before.writeUnits).toBe(2 + 6);
    expect(after.metadataWrites - before.metadataWrites).toBe(1);
  });

  it('bills a check of an absent item as one transactional write', async () => {
    const store = new MemoryMetadataStore();
    await store.transact([{ check: { pk: 'p', sk: 'absent' }, condition: { notExists: 'pk' } }]);
    expect(store.meter.read().writeUnits).toBe(2);
  });
});
