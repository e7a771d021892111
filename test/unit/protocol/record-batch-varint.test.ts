/**
 * Kafka's zigzag varints and varlongs (protocol/record-batch/varint.ts) at every length boundary, as
 * Java's ByteUtils writes and reads them, and ByteReader's bounds: each read past the end or over-long
 * encoding refused with INVALID_RECORD and its message.
 */
import { describe, expect, it } from 'vitest';
import {
  ByteReader,
  sizeOfVarint,
  sizeOfVarlong,
  writeVarint,
  writeVarlong,
} from '../../../protocol/record-batch/varint.js';
import { errorOf } from '../../support/sluice-error.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const reader = (h: string): ByteReader => {
  const bytes = Uint8Array.from(Buffer.from(h, 'hex'));
  return new ByteReader(bytes, 0, bytes.length);
};
const refusal = (fn: () => unknown) => {
  const { code, message } = errorOf(fn);
  return { code, message };
};
const invalid = (message: string) => ({ code: 'INVALID_RECORD', message });

describe('varint lengths', () => {
  // The largest value of each length and the smallest of the next, both signs.
  it.each([
    [63, '7e'],
    [64, '8001'],
    [-64, '7f'],
    [-65, '8101'],
    [8191, 'fe7f'],
    [8192, '808001'],
    [-8192, 'ff7f'],
    [-8193, '818001'],
    [2 ** 20 - 1, 'feff7f'],
    [2 ** 20, '80808001'],
    [-(2 ** 20), 'ffff7f'],
    [-(2 ** 20) - 1, '81808001'],
    [2 ** 27 - 1, 'feffff7f'],
    [2 ** 27, '8080808001'],
    [-(2 ** 27), 'ffffff7f'],
    [-(2 ** 27) - 1, '8180808001'],
  ])('%i is %s', (value, encoded) => {
    const buf = new Uint8Array(8).fill(0xee);
    // Written after two bytes that must stay as they are.
    expect(writeVarint(buf, 2, value)).toBe(2 + encoded.length / 2);
    expect(hex(buf)).toBe(('eeee' + encoded).padEnd(16, 'e'));
    expect(sizeOfVarint(value)).toBe(encoded.length / 2);
    const r = reader('ee' + encoded + 'ee');
    r.pos = 1;
    expect(r.readVarint()).toBe(value);
    expect(r.pos).toBe(1 + encoded.length / 2);
  });
});

describe('varlong lengths', () => {
  it.each([
    [2 ** 41 - 1, 'feffffffff7f'],
    [2 ** 41, '80808080808001'],
    [-(2 ** 41) - 1, '81808080808001'],
    // 7 bytes (49 bits) is as far as the reader's fast path goes; 8 bytes take the exact BigInt path.
    [2 ** 48 - 1, 'feffffffffff7f'],
    [2 ** 48, '8080808080808001'],
    [-(2 ** 48), 'ffffffffffff7f'],
    [-(2 ** 48) - 1, '8180808080808001'],
    // Zigzag past 2^53 - 1 takes the writer's BigInt path.
    [2 ** 52 - 1, 'feffffffffffff0f'],
    [2 ** 52, '8080808080808010'],
    [-(2 ** 52), 'ffffffffffffff0f'],
    [-(2 ** 52) - 1, '8180808080808010'],
  ])('%i is %s', (value, encoded) => {
    const buf = new Uint8Array(12).fill(0xee);
    expect(writeVarlong(buf, 1, value)).toBe(1 + encoded.length / 2);
    expect(hex(buf)).toBe(('ee' + encoded).padEnd(24, 'e'));
    expect(sizeOfVarlong(value)).toBe(encoded.length / 2);
    const r = reader('ee' + encoded + 'ee');
    r.pos = 1;
    expect(r.readVarlong()).toBe(value);
    expect(r.pos).toBe(1 + encoded.length / 2);
  });
});

describe('ByteReader', () => {
  it('reads longer encodings than needed, as Java does, through both varlong paths', () => {
    expect(reader('8000').readVarlong()).toBe(0);
    expect(reader('81808080808080' + '00').readVarlong()).toBe(-1);
    expect(reader('80808080808080808000').readVarlong()).toBe(0);
    expect(reader('8080808000').readVarint()).toBe(0);
  });

  it('drops the bits past 64 of a 10-byte varlong and past 32 of a 5-byte varint, as Java does', () => {
    expect(reader('808080808080808080' + '02').readVarlong()).toBe(0);
    expect(reader('80808080' + '10').readVarint()).toBe(0);
    expect(refusal(() => reader('808080808080808080' + '01').readVarlong())).toEqual(
      invalid('varlong 4611686018427387904 is beyond ±2^53'),
    );
    expect(refusal(() => reader('ffffffffffffffffff' + '01').readVarlong())).toEqual(
      invalid('varlong -9223372036854775808 is beyond ±2^53'),
    );
  });

  it('refuses a varlong of 2^53 either side, and takes 2^53 - 1', () => {
    expect(reader('feffffffffffff1f').readVarlong()).toBe(Number.MAX_SAFE_INTEGER);
    expect(refusal(() => reader('8080808080808020').readVarlong())).toEqual(
      invalid('varlong 9007199254740992 is beyond ±2^53'),
    );
    expect(refusal(() => reader('ffffffffffffff1f').readVarlong())).toEqual(
      invalid('varlong -9007199254740992 is beyond ±2^53'),
    );
    expect(refusal(() => reader('8280808080808020').readVarlong())).toEqual(
      invalid('varlong 9007199254740993 is beyond ±2^53'),
    );
    expect(refusal(() => reader('fdffffffffffffffff01').readVarlong())).toEqual(
      invalid('varlong -9223372036854775807 is beyond ±2^53'),
    );
  });

  it('refuses over-long encodings', () => {
    expect(refusal(() => reader('8080808080').readVarint())).toEqual(invalid('varint longer than 5 bytes'));
    expect(refusal(() => reader('80808080808080808080' + '00').readVarlong())).toEqual(
      invalid('varlong longer than 10 bytes'),
    );
  });

  it('refuses reads past the end, in each kind of field', () => {
    expect(refusal(() => reader('').readInt8())).toEqual(invalid('record truncated'));
    expect(refusal(() => reader('80').readVarint())).toEqual(invalid('record truncated inside a varint'));
    expect(refusal(() => reader('8080').readVarlong())).toEqual(invalid('record truncated inside a varlong'));
    expect(refusal(() => reader('8080808080808080').readVarlong())).toEqual(
      invalid('record truncated inside a varlong'),
    );
    expect(refusal(() => reader('6162').readBytes(3))).toEqual(invalid('record truncated: 3 bytes declared'));
  });

  it('stops at its end, not the buffer’s', () => {
    const bytes = Uint8Array.from([0x80, 0x01, 0x61, 0x62, 0x63]);
    expect(refusal(() => new ByteReader(bytes, 0, 1).readVarint())).toEqual(
      invalid('record truncated inside a varint'),
    );
    expect(refusal(() => new ByteReader(bytes, 2, 4).readBytes(3))).toEqual(
      invalid('record truncated: 3 bytes declared'),
    );
    expect(refusal(() => new ByteReader(bytes, 5, 5).readInt8())).toEqual(invalid('record truncated'));
  });

  it('reads signed bytes and byte views, counting what remains', () => {
    const r = reader('7f80ff' + '616263');
    expect([r.readInt8(), r.readInt8(), r.readInt8()]).toEqual([127, -128, -1]);
    expect(r.remaining).toBe(3);
    const view = r.readBytes(3);
    expect(new TextDecoder().decode(view)).toBe('abc');
    expect(view.buffer).toBe(r.bytes.buffer);
    expect([r.pos, r.remaining]).toEqual([6, 0]);
    expect(r.readBytes(0)).toEqual(new Uint8Array(0));
  });
});
