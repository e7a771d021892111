import { describe, expect, it } from 'vitest';
import { EXAMPLES, readGolden, runWithTestDriver } from '../../../examples/golden.js';

describe('examples against their golden outputs', () => {
  it.each(EXAMPLES)('%s writes exactly its golden records through the test driver', async (name) => {
    expect(await runWithTestDriver(name)).toEqual(await readGolden(name, 'output'));
  });
});
