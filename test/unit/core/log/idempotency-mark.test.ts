/**
 * The Idempotency-Key mark as stored (lib/core/log/idempotency.ts): its hash and string form are a
 * stored format, so they are pinned; the request fingerprint tells apart every two requests that
 * would write different records, however their fields are cut.
 */
import { describe, expect, it } from 'vitest';
import type { FingerprintedRecord } from '../../../../lib/core/log/idempotency.js';
import {
  checkSameRequest,
  decodeMark,
  encodeMark,
  idempotencyHash,
  markHash,
  requestFingerprint,
} from '../../../../lib/core/log/idempotency.js';

const bytes = (s: string) => new Uint8Array(Buffer.from(s));
const record = (fields: Partial<FingerprintedRecord> = {}): FingerprintedRecord => ({
  key: bytes('k'),
  value: bytes('v'),
  headers: [],
  ...fields,
});

describe('an Idempotency-Key mark', () => {
  it('hashes the topic id and key to 22 base64url characters, as stored in tails and K# items', () => {
    expect(idempotencyHash('topic-1', 'req-1')).toBe('HYQuNCA0Ao_1By48q1nAr-');
    // The topic and the key are kept apart.
    expect(idempotencyHash('topic-1', 'req-1')).not.toBe(idempotencyHash('topic-1r', 'eq-1'));
    expect(idempotencyHash('topic-2', 'req-1')).not.toBe(idempotencyHash('topic-1', 'req-1'));
  });

  it('is stored as hash.fingerprint.requestTime36 and read back', () => {
    const mark = { hash: 'H', fingerprint: 'F', requestTime: 1_700_000_000_000 };
    expect(encodeMark(mark)).toBe('H.F.loyw3v28');
    expect(decodeMark('H.F.loyw3v28')).toEqual(mark);
    expect(encodeMark({ hash: 'H', fingerprint: 'F', requestTime: 0 })).toBe('H.F.0');
    expect(decodeMark('H.F.0')).toEqual({ hash: 'H', fingerprint: 'F', requestTime: 0 });
    expect([markHash('H.F.loyw3v28'), markHash('Hx.F.0')]).toEqual(['H', 'Hx']);
    // A cut mark reads its missing parts as empty (the time as NaN), not as anything else.
    expect(decodeMark('H')).toEqual({ hash: 'H', fingerprint: '', requestTime: NaN });
    expect(decodeMark('H.F')).toEqual({ hash: 'H', fingerprint: 'F', requestTime: NaN });
  });

  it('lets a retry of the same request through and refuses another request under the key', () => {
    const stored = { hash: 'H', fingerprint: 'F', requestTime: 1 };
    expect(checkSameRequest(stored, 'F', 't-0')).toBeUndefined();
    let thrown: unknown;
    try {
      checkSameRequest(stored, 'G', 't-0');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      retriable: false,
      message:
        'this Idempotency-Key was used for a different request on t-0; use a new key for a new request',
    });
  });
});

describe('a request fingerprint', () => {
  it('is 22 base64url characters of a digest of the records as parsed', () => {
    expect(requestFingerprint([])).toBe('YUdQfGTNanqZTFLbje0sLR');
    expect(
      requestFingerprint([
        {
          key: null,
          value: new Uint8Array([1, 2]),
          headers: [{ key: 'h', value: null }],
          partition: 2,
          timestamp: 5,
        },
      ]),
    ).toBe('NnGPTtPtQuL2jXpjeOdbfZ');
    // Without a partition or a timestamp (both hashed as empty fields): pinned too, as stored marks carry it.
    expect(requestFingerprint([record()])).toBe('yyoeTIfkH9L1wfua-22XYT');
    // The same bytes, however they arrived.
    expect(requestFingerprint([record({ value: new Uint8Array(Buffer.from('dg==', 'base64')) })])).toBe(
      requestFingerprint([record()]),
    );
  });

  it('differs for any two requests that write different records, however the fields are cut', () => {
    const requests: FingerprintedRecord[][] = [
      [],
      [record()],
      [record(), record()],
      [record({ key: null })],
      [record({ key: new Uint8Array() })],
      [record({ value: null })],
      [record({ value: new Uint8Array() })],
      // Bytes moved between key and value.
      [record({ key: bytes('kv'), value: bytes('') })],
      [record({ key: bytes(''), value: bytes('kv') })],
      [record({ partition: 0 })],
      [record({ partition: 1 })],
      [record({ timestamp: 0 })],
      [record({ timestamp: 1 })],
      // A partition and a timestamp with the same digits.
      [record({ partition: 12 })],
      [record({ timestamp: 12 })],
      [record({ headers: [{ key: 'h', value: null }] })],
      [record({ headers: [{ key: 'h', value: new Uint8Array() }] })],
      [record({ headers: [{ key: 'h', value: bytes('x') }] })],
      [record({ headers: [{ key: 'hx', value: new Uint8Array() }] })],
      [record({ headers: [{ key: '', value: bytes('hx') }] })],
      [
        record({
          headers: [
            { key: 'h', value: null },
            { key: 'h', value: null },
          ],
        }),
      ],
      // A header of the first record or of the second.
      [record({ headers: [{ key: 'h', value: null }] }), record()],
      [record(), record({ headers: [{ key: 'h', value: null }] })],
    ];
    const prints = requests.map(requestFingerprint);
    expect(new Set(prints).size).toBe(requests.length);
    for (const p of prints) expect(p).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});
