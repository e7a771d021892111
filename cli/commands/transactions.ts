/**
 * `transactions list | describe --transactional-id X`, after kafka-transactions.sh: the coordinator's
 * state of each transactional.id, in Kafka's columns. Sluice's coordinator is no broker: the API is
 * node 0, as the Kafka gateway's metadata has it, so Coordinator is 0.
 */
import type { TransactionDescription } from '../api.js';
import type { CommandSpec } from '../command.js';
import { UsageError } from '../command.js';
import { renderTable } from '../table.js';

const COORDINATOR = 0;

const topicPartitions = (t: TransactionDescription): string =>
  t.partitions.flatMap((tp) => tp.partitions.map((p) => `${tp.topic}-${p}`)).join(',');

/** kafka-transactions.sh describe's row: start and duration are None without an open transaction. */
export const renderTransaction = (t: TransactionDescription, now: number): string => {
  const open = t.transactionStartTimeMs >= 0;
  return renderTable(
    [
      { header: 'CoordinatorId', value: () => COORDINATOR },
      { header: 'TransactionalId', value: (x) => x.transactionalId },
      { header: 'ProducerId', value: (x) => x.producerId },
      { header: 'ProducerEpoch', value: (x) => x.producerEpoch },
      { header: 'TransactionState', value: (x) => x.state },
      { header: 'TransactionTimeoutMs', value: (x) => x.transactionTimeoutMs },
      { header: 'CurrentTransactionStartTimeMs', value: (x) => (open ? x.transactionStartTimeMs : 'None') },
      {
        header: 'TransactionDurationMs',
        value: (x) => (open ? Math.max(0, now - x.transactionStartTimeMs) : 'None'),
      },
      { header: 'TopicPartitions', value: (x) => topicPartitions(x) },
    ],
    [t],
  );
};

const list: CommandSpec = {
  words: ['transactions', 'list'],
  summary: 'List the transactional.ids with their producer id and state (kafka-transactions.sh list).',
  args: [],
  options: {},
  async run(ctx) {
    const transactions = await ctx.api.listTransactions();
    if (ctx.json) return void (await ctx.print(JSON.stringify({ transactions })));
    if (transactions.length === 0) return void ctx.note('No transactional ids.');
    await ctx.print(
      renderTable(
        [
          { header: 'TransactionalId', value: (t) => t.transactionalId },
          { header: 'Coordinator', value: () => COORDINATOR },
          { header: 'ProducerId', value: (t) => t.producerId },
          { header: 'TransactionState', value: (t) => t.state },
        ],
        transactions,
      ),
    );
  },
};

const describe: CommandSpec = {
  words: ['transactions', 'describe'],
  summary:
    "Show a transactional.id's producer, epoch, state, timeout, open transaction and its partitions (kafka-transactions.sh describe).",
  args: [],
  options: {
    'transactional-id': { type: 'string', valueName: 'ID', description: 'the transactional.id (required)' },
  },
  async run(ctx, { values }) {
    const id = values['transactional-id'];
    if (typeof id !== 'string' || id === '')
      throw new UsageError('transactions describe needs --transactional-id', describe);
    const t = await ctx.api.describeTransaction(id);
    await ctx.print(ctx.json ? JSON.stringify(t) : renderTransaction(t, ctx.now()));
  },
};

export const transactionCommands: readonly CommandSpec[] = [list, describe];
