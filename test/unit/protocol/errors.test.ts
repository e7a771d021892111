/**
 * SluiceError (protocol/errors.ts), the one error type: its code, message, retriable default, details,
 * and a cause only when one is given.
 */
import { describe, expect, it } from 'vitest';
import { SluiceError, invalidRequest, isSluiceError } from '../../../protocol/errors.js';

describe('SluiceError', () => {
  it('has no cause property unless a cause is given', () => {
    const plain = new SluiceError('CORRUPT_MESSAGE', 'bad bytes');
    expect(Object.hasOwn(plain, 'cause')).toBe(false);
    expect([plain.name, plain.code, plain.message, plain.retriable]).toEqual([
      'SluiceError',
      'CORRUPT_MESSAGE',
      'bad bytes',
      false,
    ]);
    const reason = new Error('disk');
    const caused = new SluiceError('CORRUPT_MESSAGE', 'bad bytes', { cause: reason });
    expect(Object.hasOwn(caused, 'cause')).toBe(true);
    expect(caused.cause).toBe(reason);
  });

  it('invalidRequest carries the details it is given, and none otherwise', () => {
    const withDetails = invalidRequest('offset out of range', { low: 0, high: 9 });
    expect(isSluiceError(withDetails)).toBe(true);
    expect([withDetails.code, withDetails.message, withDetails.details]).toEqual([
      'INVALID_REQUEST',
      'offset out of range',
      { low: 0, high: 9 },
    ]);
    expect(invalidRequest('no body').details).toBeUndefined();
  });
});
