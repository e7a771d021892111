/** Paging over the metadata store port, for whoever walks a whole key range (the core, Connect's state). */
import type { Item, MetadataStore, QueryInput } from './metadata-store.js';

/** Every item a query matches, following the store's pages (for maintenance, never the hot path). */
export const queryAll = async (store: MetadataStore, input: Omit<QueryInput, 'cursor'>): Promise<Item[]> => {
  const items: Item[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.query({ ...input, ...(cursor ? { cursor } : {}) });
    items.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return items;
};

/**
 * The items a query matches, page by page as the caller asks for them: a walk that stops early (at
 * the first item it keeps) reads only the pages it reached.
 */
export async function* queryPages(
  store: MetadataStore,
  input: Omit<QueryInput, 'cursor'>,
): AsyncGenerator<Item> {
  let cursor: string | undefined;
  do {
    const page = await store.query({ ...input, ...(cursor ? { cursor } : {}) });
    yield* page.items;
    cursor = page.cursor;
  } while (cursor);
}
