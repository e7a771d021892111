import { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { registerStorageContract } from './storage-contract.js';

registerStorageContract('memory', async () => ({
  metadata: new MemoryMetadataStore(),
  objects: new MemoryObjectStore('s0'),
}));
