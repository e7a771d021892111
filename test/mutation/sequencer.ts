import { relative } from 'node:path';
import type { TestSpecification } from 'vitest/node';
import { BaseSequencer } from 'vitest/node';

/**
 * File order for mutation runs. Vitest runs the longest files first, which suits a full run on many
 * workers; a mutant run is one worker that stops at the first failure (Stryker's bail), so the files
 * that ran the last mutant's killer go first (neighbouring mutants tend to die to the same tests) and
 * then the fastest: a killed mutant costs its quickest killing file, not the slowest covering one.
 * Only the order changes, never which tests run, so the score is the same.
 */
export class MutationSequencer extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const key = (file: TestSpecification) =>
      `${file.project.name}:${relative(this.ctx.config.root, file.moduleId)}`;
    const rank = (file: TestSpecification): [number, number] => {
      const state = cache.getFileTestResults(key(file));
      if (state) return [state.failed ? 0 : 1, state.duration];
      // Never run yet: smaller files first, after every file with a known duration.
      return [2, cache.getFileStats(key(file))?.size ?? Number.MAX_SAFE_INTEGER];
    };
    return Promise.resolve(
      [...files].sort((a, b) => {
        const [ra, rb] = [rank(a), rank(b)];
        return ra[0] - rb[0] || ra[1] - rb[1];
      }),
    );
  }
}
