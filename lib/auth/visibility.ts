/**
 * What a caller may see of a group: Kafka's OffsetFetch of all topics leaves out the topics the caller
 * may not DESCRIBE, and so does Sluice for every answer that lists a group's topics (its committed
 * offsets, and in a description also its members' subscriptions and assignments). DESCRIBE on a group
 * must not reveal the names of topics the caller cannot see.
 */
import type { CallerContext, HttpResponse } from '../http/types.js';
import type { Authorizer } from './acl.js';
import { topicDescribe } from './acl.js';

interface Listing {
  offsets?: unknown;
  members?: unknown;
}

interface Member {
  subscribedTopics?: unknown;
  assignment?: { topicPartitions?: unknown } | null;
}

const array = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const topicOf = (value: unknown): unknown =>
  value !== null && typeof value === 'object' ? (value as { topic?: unknown }).topic : undefined;

const topicsNamed = (body: Listing): string[] => {
  const names = [
    ...array(body.offsets).map(topicOf),
    ...array(body.members).flatMap((m) => [
      ...array((m as Member).subscribedTopics),
      ...array((m as Member).assignment?.topicPartitions).map(topicOf),
    ]),
  ];
  return [...new Set(names.filter((t): t is string => typeof t === 'string'))];
};

/** The answer with every topic the caller may not describe left out (all of them without a caller). */
export const describableTopicsOnly = async (
  authorizer: Authorizer,
  caller: CallerContext | undefined,
  response: HttpResponse,
): Promise<HttpResponse> => {
  const body = response.body as Listing | undefined;
  if (response.status !== 200 || body === null || typeof body !== 'object' || body instanceof Uint8Array)
    return response;
  const topics = topicsNamed(body);
  if (topics.length === 0) return response;
  const answers = caller ? await authorizer.allowed(caller, topics.map(topicDescribe)) : [];
  const visible = new Set(topics.filter((_, i) => answers[i] === true));
  const seen = (value: unknown) => visible.has(value as string);
  const filtered: Record<string, unknown> = { ...body };
  if (Array.isArray(body.offsets)) filtered['offsets'] = body.offsets.filter((o) => seen(topicOf(o)));
  if (Array.isArray(body.members))
    filtered['members'] = body.members.map((raw) => {
      const m = raw as Member & Record<string, unknown>;
      return {
        ...m,
        ...(Array.isArray(m.subscribedTopics) ? { subscribedTopics: m.subscribedTopics.filter(seen) } : {}),
        ...(m.assignment && Array.isArray(m.assignment.topicPartitions)
          ? {
              assignment: {
                ...m.assignment,
                topicPartitions: m.assignment.topicPartitions.filter((tp) => seen(topicOf(tp))),
              },
            }
          : {}),
      };
    });
  return { ...response, body: filtered };
};
