/**
 * The wait notifier reads a stream record's images as Lambda's event carries them (JSON: numbers as
 * strings, binary values as base64): unmarshalStreamImage turns them into the items the store would
 * read, so the core decodes a partition's state from either the same way.
 */
import { describe, expect, it } from 'vitest';
import { marshalItem, unmarshalItem, unmarshalStreamImage } from '../../../lib/adapters/aws/marshal.js';

describe('stream images', () => {
  it('reads an image as the store reads the item, binary values from base64 at any depth', () => {
    const item = {
      pk: 'P#t1#0',
      sk: 'STATE',
      nextOffset: 7,
      bytes: new Uint8Array([1, 2, 3]),
      tail: [{ base: 5, id: new Uint8Array([9]) }],
      nested: { inner: { b: new Uint8Array([4]) } },
      flag: true,
      none: null,
    };
    // Lambda's event: the SDK's wire form with bytes spelled base64 (as JSON.stringify of it shows them).
    const asEvent = JSON.parse(
      JSON.stringify(marshalItem(item), (_k, v: unknown) =>
        v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v,
      ),
    ) as Record<string, unknown>;
    expect(unmarshalStreamImage(asEvent)).toEqual(unmarshalItem(marshalItem(item)));
    expect(unmarshalStreamImage(undefined)).toBeUndefined();
  });
});
