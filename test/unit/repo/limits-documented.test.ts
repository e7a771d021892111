/**
 * docs/limits.md lists every limit Sluice has beyond Kafka's, with its reason. This holds the table to
 * the code: every documented constant exists with the documented value, and every limit constant of
 * the edge (EDGE_LIMITS) and of the modules below is documented, so a new limit cannot go unlisted.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EDGE_LIMITS } from '../../../lib/http/limits.js';
import { MAX_OFFSET_METADATA_CHARS } from '../../../lib/core/groups/requests.js';
import { MAX_PARTITIONS } from '../../../lib/core/topics/catalog.js';
import { MAX_FETCH_BYTES, MAX_WAIT_MS } from '../../../lib/core/log/fetch-request.js';
import { MAX_PRODUCERS_PER_PARTITION } from '../../../lib/core/log/producer-bounds.js';
import { MAX_DECOMPRESSED_BYTES } from '../../../protocol/record-batch/compression.js';
import { MAX_OUTBOX_BYTES, MAX_STATE_WRITES_PER_COMMIT } from '../../../streams/runtime/eos.js';
import { STREAMS_QUERY_LIMITS } from '../../../streams/query/rest.js';

const CODE: Record<string, number> = {
  ...Object.fromEntries(Object.entries(EDGE_LIMITS).map(([k, v]) => [`EDGE_LIMITS.${k}`, v])),
  MAX_OFFSET_METADATA_CHARS,
  MAX_PARTITIONS,
  MAX_FETCH_BYTES,
  MAX_WAIT_MS,
  MAX_PRODUCERS_PER_PARTITION,
  MAX_DECOMPRESSED_BYTES,
  MAX_STATE_WRITES_PER_COMMIT,
  MAX_OUTBOX_BYTES,
  'STREAMS_QUERY_LIMITS.maxKeyBytes': STREAMS_QUERY_LIMITS.maxKeyBytes,
  'STREAMS_QUERY_LIMITS.maxRangeLimit': STREAMS_QUERY_LIMITS.maxRangeLimit,
};

const documented = (): Map<string, { value: number; why: string }> => {
  const rows = new Map<string, { value: number; why: string }>();
  for (const line of readFileSync(new URL('../../../docs/limits.md', import.meta.url), 'utf8').split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`([A-Za-z_.]+)`$/.exec(cells[1] ?? '')?.[1];
    if (name === undefined) continue;
    rows.set(name, { value: Number(cells[2]!.replace(/,/g, '')), why: cells[4] ?? '' });
  }
  return rows;
};

describe('docs/limits.md', () => {
  it('documents every limit constant with the value the code has, and a reason', () => {
    const rows = documented();
    expect([...rows.keys()].sort()).toEqual(Object.keys(CODE).sort());
    for (const [name, { value, why }] of rows) {
      expect(value, name).toBe(CODE[name]);
      expect(why.length, name).toBeGreaterThan(10);
    }
  });

  it('lists no limit on the number of headers a record carries (Kafka has none)', () => {
    expect(Object.keys(EDGE_LIMITS).some((k) => /header/i.test(k))).toBe(false);
  });
});
