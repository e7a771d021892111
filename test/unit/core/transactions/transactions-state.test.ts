/**
 * The transaction item's state classes and its key: Kafka's TransactionState transitions are decided by
 * whether a state is a Prepare* (a decision whose markers may still be missing) or a Complete one, and
 * the ids spread over 16 shard keys by FNV-1a (32-bit), so no one DynamoDB partition holds them all.
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import type { TransactionState } from '../../../../lib/core/transactions/index.js';
import {
  TRANSACTION_SHARDS,
  isComplete,
  isPrepare,
  shardOf,
  transactionKey,
} from '../../../../lib/core/transactions/state.js';

const states: TransactionState[] = [
  'Empty',
  'Ongoing',
  'PrepareCommit',
  'PrepareAbort',
  'CompleteCommit',
  'CompleteAbort',
];

describe('transaction states', () => {
  it('Prepare* are the decided-but-not-finished states', () => {
    expect(states.filter(isPrepare)).toEqual(['PrepareCommit', 'PrepareAbort']);
  });

  it('Empty and Complete* are the states with no transaction in flight', () => {
    expect(states.filter(isComplete)).toEqual(['Empty', 'CompleteCommit', 'CompleteAbort']);
  });
});

describe('transaction shards', () => {
  it('are FNV-1a 32-bit of the id modulo 16 (the published test vectors)', () => {
    // FNV-1a("") = 0x811c9dc5, ("a") = 0xe40c292c, ("foobar") = 0xbf9cf968.
    expect(shardOf('')).toBe(0x811c9dc5 % 16);
    expect(shardOf('a')).toBe(0xe40c292c % 16);
    expect(shardOf('foobar')).toBe(0xbf9cf968 % 16);
    expect(transactionKey('foobar')).toEqual(keys.transaction('foobar', 0xbf9cf968 % 16));
  });

  it('spread ids over every shard', () => {
    const used = new Set(Array.from({ length: 200 }, (_, i) => shardOf(`app-${i}`)));
    expect(used.size).toBe(TRANSACTION_SHARDS);
  });
});
