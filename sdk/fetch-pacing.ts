/**
 * Paced fetching (issue 28): when a consumer on the wait socket need not register.
 *
 * A consumer caught up on the socket registers its partitions (a write each) and is told of the next
 * record by a frame: about $2 per million wakes. When records arrive several times a second per member
 * that is a registration, a frame and a check every few hundred milliseconds, for a wait that would
 * have ended anyway. Then the consumer fetches again `pacedFetchMs` after its last fetch began,
 * without naming its connection: no registration, no frame, a fetch that almost surely brings
 * records (priced as consuming them, not as waiting). The first paced fetch that brings nothing
 * registers as before, so a consumer whose producers went quiet waits on the socket again at the cost
 * of one empty fetch. Kafka's consumer makes the same trade with fetch.min.bytes and
 * fetch.max.wait.ms (default 500 ms): a fetch the broker holds back until enough has arrived.
 *
 * Arrivals are the stored batches that brought records, counted only over windows between two fetches
 * that both left every partition at its end (so a backlog read in several fetches is not mistaken for a
 * rate), and weighed towards the recent windows. Pure: the consumer feeds it and the cost model
 * (bench/cost-model.ts) prices its decision with the same rule.
 */

/** The SDK consumer's default interval between paced fetches (Kafka's fetch.max.wait.ms default). */
export const DEFAULT_PACED_FETCH_MS = 500;

/**
 * A paced fetch is made only when one `pacedFetchMs` after the last would bring nothing at most this
 * often, for Poisson arrivals at the estimated rate: e^(−rate·interval) ≤ 5 %, rate·interval ≥ 3.
 */
export const PACED_EMPTY_CHANCE = 0.05;

/** The weight each window keeps when the next is observed: about the last five windows count. */
const KEEP = 0.8;

/** Whether a fetch `intervalMs` after the last finds records often enough to skip registering. */
export const paces = (arrivalsPerSec: number, intervalMs: number): boolean =>
  intervalMs > 0 &&
  Number.isFinite(arrivalsPerSec) &&
  Math.exp((-arrivalsPerSec * intervalMs) / 1000) <= PACED_EMPTY_CHANCE;

/** Arrivals a second over the recent caught-up windows. */
export class ArrivalRate {
  private batches = 0;
  private seconds = 0;
  /** When the last fetch that left every partition at its end began; undefined: none since a reset. */
  private caughtUpAt: number | undefined;

  /**
   * One fetch, begun at `startedAt` (ms), that brought `batches` stored batches with records; `caughtUp`:
   * it left every partition it asked at its end. The window since the previous caught-up fetch counts
   * only if both were caught up: all that arrived in it was read by this fetch.
   */
  observe(startedAt: number, batches: number, caughtUp: boolean): void {
    if (caughtUp && this.caughtUpAt !== undefined && startedAt > this.caughtUpAt) {
      this.batches = this.batches * KEEP + batches;
      this.seconds = this.seconds * KEEP + (startedAt - this.caughtUpAt) / 1000;
    }
    this.caughtUpAt = caughtUp ? startedAt : undefined;
  }

  /** The estimate: 0 until a window was observed. */
  get perSecond(): number {
    return this.seconds > 0 ? this.batches / this.seconds : 0;
  }

  /** What the consumer reads changed (an assignment): earlier windows say nothing of it. */
  reset(): void {
    this.batches = 0;
    this.seconds = 0;
    this.caughtUpAt = undefined;
  }
}
