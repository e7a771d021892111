/**
 * A small seeded pseudo-random source (mulberry32), so a fault schedule or a workload replays exactly
 * from its seed. Not for anything that needs unpredictability.
 */
export type Random = () => number;

/** Uniform numbers in [0, 1), the same sequence for the same seed. */
export const seededRandom = (seed: number): Random => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/** An integer in [min, max]. */
export const randomInt = (random: Random, min: number, max: number): number =>
  min + Math.floor(random() * (max - min + 1));

/** One element of a non-empty list. */
export const pick = <T>(random: Random, items: readonly T[]): T => {
  if (items.length === 0) throw new Error('pick from an empty list');
  return items[Math.floor(random() * items.length)]!;
};

/** Picks a key with probability proportional to its weight (weights ≥ 0, at least one > 0). */
export const weighted = <K extends string>(random: Random, weights: Partial<Record<K, number>>): K => {
  const entries = Object.entries(weights).filter(([, w]) => (w as number) > 0) as [K, number][];
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  if (total <= 0) throw new Error('weighted pick needs a positive weight');
  let x = random() * total;
  for (const [key, w] of entries) {
    x -= w;
    if (x < 0) return key;
  }
  return entries.at(-1)![0];
};
