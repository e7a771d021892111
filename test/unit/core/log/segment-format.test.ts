/**
 * The segment object's footer byte for byte (Kafka's .index and .timeindex folded into one), how a
 * reader gets at it with two ranged GETs (trailer, then footer), and every way a corrupt, truncated or
 * foreign object is refused: KAFKA_STORAGE_ERROR, not retriable, naming what is wrong.
 */
import { describe, expect, it } from 'vitest';
import type { SegmentChunk } from '../../../../lib/core/log/segments/format.js';
import {
  SEGMENT_TRAILER_BYTES,
  decodeSegmentFooter,
  encodeSegment,
  footerBytes,
} from '../../../../lib/core/log/segments/format.js';
import { crc32c } from '../../../../protocol/record-batch/index.js';

/** A base offset past 2^32, so the trailer's i64 and the chunks' u32 relative offsets both matter. */
const BASE = 2 ** 32 + 100;
const data = new Uint8Array(300).map((_, i) => i % 251);
const chunks: SegmentChunk[] = [
  {
    baseOffset: BASE,
    position: 0,
    sizeInBytes: 120,
    offsetCount: 7,
    recordCount: 7,
    maxTimestamp: 1_700_000_005_000,
    firstTimestamp: 1_700_000_004_000,
  },
  {
    baseOffset: BASE + 7,
    position: 120,
    sizeInBytes: 100,
    offsetCount: 3,
    recordCount: 0,
    maxTimestamp: -1,
    firstTimestamp: -1,
  },
  {
    baseOffset: BASE + 10,
    position: 220,
    sizeInBytes: 80,
    offsetCount: 65_536,
    recordCount: 2,
    maxTimestamp: 1_700_000_009_999,
    firstTimestamp: 1_700_000_009_998,
  },
];
const segment = encodeSegment(data, chunks);
const SIZE = 300 + 3 * 32 + 32;

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const u32 = (n: number) => n.toString(16).padStart(8, '0');
const i64 = (n: number) => BigInt.asUintN(64, BigInt(n)).toString(16).padStart(16, '0');

/** Throws the footer's KAFKA_STORAGE_ERROR with exactly this message. */
const refused = (fn: () => unknown, message: string) => {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toMatchObject({ code: 'KAFKA_STORAGE_ERROR', retriable: false, message });
};

describe('the segment footer', () => {
  it('is written big-endian after the data: 32 bytes per chunk, then the trailer with its CRC-32C and magic', () => {
    expect(segment.length).toBe(SIZE);
    expect(hex(segment.subarray(0, 300))).toBe(hex(data));
    const entries = [
      [0, 0, 7, 7].map(u32).join('') + i64(1_700_000_005_000) + i64(1_700_000_004_000),
      [7, 120, 3, 0].map(u32).join('') + i64(-1) + i64(-1),
      [10, 220, 65_536, 2].map(u32).join('') + i64(1_700_000_009_999) + i64(1_700_000_009_998),
    ].join('');
    // baseOffset i64, chunkCount, dataBytes, span (7 + 3 + 65,536 offsets), reserved.
    const trailerHead = i64(BASE) + [3, 300, 65_546, 0].map(u32).join('');
    const covered = Buffer.from(entries + trailerHead, 'hex');
    expect(hex(segment.subarray(300))).toBe(`${entries}${trailerHead}${u32(crc32c(covered))}534c4731`);
  });

  it('decodes back to the chunks with their byte lengths, from the whole object', () => {
    expect(decodeSegmentFooter(segment, SIZE)).toEqual({
      baseOffset: BASE,
      span: 65_546,
      dataBytes: 300,
      chunks,
    });
  });

  it('is found with two ranged reads: the trailer gives the footer size, the footer decodes alone', () => {
    expect(SEGMENT_TRAILER_BYTES).toBe(32);
    const trailer = segment.subarray(SIZE - SEGMENT_TRAILER_BYTES);
    expect(footerBytes(trailer)).toBe(3 * 32 + 32);
    // Any suffix that holds the footer will do, a copy at offset 0 or a view into a larger buffer.
    const footer = new Uint8Array(segment.subarray(SIZE - footerBytes(trailer)));
    expect(decodeSegmentFooter(footer, SIZE)).toEqual(decodeSegmentFooter(segment, SIZE));
    const suffix = segment.subarray(250);
    expect(decodeSegmentFooter(suffix, SIZE).chunks).toEqual(chunks);
    // The trailer as the tail of a longer read (the last bytes of the data before it).
    expect(footerBytes(segment.subarray(200))).toBe(128);
  });

  it('of one chunk spans that chunk', () => {
    const one = encodeSegment(data.subarray(0, 5), [
      {
        baseOffset: 0,
        position: 0,
        sizeInBytes: 5,
        offsetCount: 1,
        recordCount: 1,
        maxTimestamp: 9,
        firstTimestamp: 9,
      },
    ]);
    expect(one.length).toBe(5 + 64);
    expect(decodeSegmentFooter(one, one.length)).toEqual({
      baseOffset: 0,
      span: 1,
      dataBytes: 5,
      chunks: [
        {
          baseOffset: 0,
          position: 0,
          sizeInBytes: 5,
          offsetCount: 1,
          recordCount: 1,
          maxTimestamp: 9,
          firstTimestamp: 9,
        },
      ],
    });
  });
});

describe('a segment that cannot be written', () => {
  it('has no chunk, or chunks that leave a gap in offsets or bytes, or cover too little data', () => {
    expect(() => encodeSegment(data, [])).toThrow(new Error('a segment needs at least one chunk'));
    expect(() =>
      encodeSegment(data, [chunks[0]!, { ...chunks[1]!, baseOffset: BASE + 8 }, chunks[2]!]),
    ).toThrow(new Error(`segment chunk 1 at offset ${BASE + 8}, byte 120 leaves a gap`));
    expect(() => encodeSegment(data, [chunks[0]!, chunks[1]!, { ...chunks[2]!, position: 221 }])).toThrow(
      new Error(`segment chunk 2 at offset ${BASE + 10}, byte 221 leaves a gap`),
    );
    // The first chunk must start at byte 0; its base offset is the segment's.
    expect(() => encodeSegment(data, [{ ...chunks[0]!, position: 1 }])).toThrow(
      new Error(`segment chunk 0 at offset ${BASE}, byte 1 leaves a gap`),
    );
    expect(() => encodeSegment(data, chunks.slice(0, 2))).toThrow(
      new Error('segment chunks cover 220 of 300 data bytes'),
    );
    expect(() => encodeSegment(data.subarray(0, 299), chunks)).toThrow(
      new Error('segment chunks cover 300 of 299 data bytes'),
    );
  });
});

describe('a segment footer that is refused', () => {
  it('is shorter than a trailer', () => {
    refused(
      () => decodeSegmentFooter(segment.subarray(SIZE - 31), SIZE),
      'segment footer: 31 bytes cannot hold a segment trailer',
    );
    refused(
      () => footerBytes(segment.subarray(SIZE - 31)),
      'segment footer: the object does not end in a segment trailer',
    );
    // The magic alone is not a trailer.
    refused(
      () => footerBytes(segment.subarray(SIZE - 4)),
      'segment footer: the object does not end in a segment trailer',
    );
  });

  it('does not end in the magic: data that is not a segment, or a segment cut short', () => {
    const message = 'segment footer: the object does not end in a segment trailer';
    refused(() => decodeSegmentFooter(data, data.length), message);
    refused(() => decodeSegmentFooter(segment.subarray(0, SIZE - 1), SIZE - 1), message);
    refused(() => footerBytes(data.subarray(0, 32)), message);
  });

  it('claims chunks the bytes read do not hold, or a size the object does not have', () => {
    // The trailer alone of a three-chunk segment: its chunk entries are not in the bytes given.
    refused(
      () => decodeSegmentFooter(segment.subarray(SIZE - 32), SIZE),
      `segment footer: the trailer's 3 chunks and 300 data bytes do not fit ${SIZE} bytes`,
    );
    refused(
      () => decodeSegmentFooter(segment.subarray(SIZE - 64), SIZE),
      `segment footer: the trailer's 3 chunks and 300 data bytes do not fit ${SIZE} bytes`,
    );
    for (const size of [SIZE - 1, SIZE + 1, 300, 0])
      refused(
        () => decodeSegmentFooter(segment, size),
        `segment footer: the trailer's 3 chunks and 300 data bytes do not fit ${size} bytes`,
      );
  });

  it('fails its CRC-32C when any footer byte but the magic is flipped', () => {
    for (let at = 300; at < SIZE - 4; at++) {
      const flipped = new Uint8Array(segment);
      flipped[at] = flipped[at]! ^ 0x10;
      expect(() => decodeSegmentFooter(flipped, SIZE), `byte ${at}`).toThrow();
    }
    // A flip in an entry or the CRC itself is a CRC failure (a flip in the count or size is a misfit).
    for (const at of [300, 300 + 40, 300 + 95, 300 + 96 + 2, 300 + 96 + 16, 300 + 96 + 24]) {
      const flipped = new Uint8Array(segment);
      flipped[at] = flipped[at]! ^ 0x10;
      refused(() => decodeSegmentFooter(flipped, SIZE), 'segment footer: the footer fails its CRC-32C');
    }
    // The data is not covered: the batches in it carry their own CRCs.
    const dataFlipped = new Uint8Array(segment);
    dataFlipped[7] = dataFlipped[7]! ^ 1;
    expect(decodeSegmentFooter(dataFlipped, SIZE).chunks).toEqual(chunks);
  });
});
