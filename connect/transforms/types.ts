import type { ConfigKey } from '../config-def.js';
import type { ConnectRecord } from '../plugin.js';

/** One SMT instance: a record in, a record out, or null to drop it (Filter). */
export type Transform = <R extends ConnectRecord>(record: R) => R | null;

/** Builds a transform from its settings (`transforms.<alias>.*` with the prefix removed). */
export interface TransformFactory {
  class: string;
  configKeys: readonly ConfigKey[];
  create(config: Record<string, string>): (record: ConnectRecord) => ConnectRecord | null;
}

export interface PredicateFactory {
  class: string;
  configKeys: readonly ConfigKey[];
  create(config: Record<string, string>): (record: ConnectRecord) => boolean;
}

/** A record the transform cannot handle; the runtime's errors.tolerance decides what happens next. */
export class TransformError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransformError';
  }
}
