/** Assertions on the typed errors Sluice throws, shared by the unit tests. */
import { SluiceError } from '../../protocol/errors.js';

/** The SluiceError `fn` throws (failing the test if it throws anything else, or nothing). */
export function errorOf(fn: () => unknown): SluiceError {
  try {
    fn();
  } catch (e) {
    if (e instanceof SluiceError) return e;
    throw e;
  }
  throw new Error('expected a SluiceError');
}

/** The code of the SluiceError `fn` throws. */
export const codeOf = (fn: () => unknown): string => errorOf(fn).code;
