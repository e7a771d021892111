/**
 * GET /v1/topics/{topic}/segments: each partition's log segments and size, as Kafka's
 * DescribeLogDirs (kafka-log-dirs --describe) reports a partition's size and kafka-dump-log its
 * segments. A read of the metadata table only: no object is opened.
 */
import { invalidRequest } from '../../../protocol/errors.js';
import { parsePartitionParam, readPartitionState } from '../../core/log/context.js';
import type { LogContext } from '../../core/log/context.js';
import { describeSegments } from '../../core/log/segments/describe.js';
import { defineRoute } from '../define-route.js';
import { json } from '../types.js';
import type { TopicSegments } from '../../wire/types.js';
import { TOPIC_ERRORS, queryParam } from './errors.js';

export interface SegmentRoutesOptions {
  log: LogContext;
}

/** Partitions described at once (each is a few consistent reads). */
const CONCURRENCY = 8;

export const SEGMENT_ROUTES = [
  defineRoute<SegmentRoutesOptions>({
    method: 'GET',
    path: '/v1/topics/{topic}/segments',
    job: 'admin',
    acl: { operation: 'DESCRIBE', resourceType: 'TOPIC', param: 'topic' },
    id: 'describeSegments',
    summary:
      "Each partition's log segments (base and end offset, bytes, batches, records, timestamps, tier) and its size in bytes (DescribeLogDirs).",
    query: [queryParam('partition', 'integer', 'only this partition (default: every partition)')],
    ok: { 200: 'TopicSegments' },
    errors: TOPIC_ERRORS,
    handler:
      ({ log }) =>
      async (request) => {
        const unknown = Object.keys(request.query).filter((k) => k !== 'partition');
        if (unknown.length > 0)
          throw invalidRequest(
            `unknown query parameter ${JSON.stringify(unknown[0])}; this read takes partition`,
          );
        const topic = await log.catalog.get(request.params['topic']!, { fresh: true });
        const raw = request.query['partition'];
        const partitions =
          raw === undefined
            ? Array.from({ length: topic.partitions }, (_, p) => p)
            : [parsePartitionParam(raw)];
        const described: TopicSegments['partitions'] = [];
        for (let i = 0; i < partitions.length; i += CONCURRENCY)
          described.push(
            ...(await Promise.all(
              partitions.slice(i, i + CONCURRENCY).map(async (p) => {
                const state = await readPartitionState(log.store, topic, p);
                return describeSegments(log.store, topic.topicId, p, state);
              }),
            )),
          );
        return json(200, { topic: topic.name, partitions: described } satisfies TopicSegments);
      },
  }),
];
