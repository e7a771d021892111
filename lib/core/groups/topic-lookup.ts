import type { GroupTopics, TopicInfo } from './types.js';

/**
 * The catalog as one request sees it: each topic is described at most once per request (so a retried
 * attempt sees the same answer), and never cached across requests (so new partitions show up at once).
 */
export class TopicLookup {
  private readonly cache = new Map<string, Promise<TopicInfo | undefined>>();

  constructor(private readonly topics: GroupTopics) {}

  describe(name: string): Promise<TopicInfo | undefined> {
    let answer = this.cache.get(name);
    if (!answer) {
      answer = this.topics
        .describe(name)
        .then((t) => (t ? { topicId: t.topicId, partitions: t.partitions } : undefined));
      this.cache.set(name, answer);
    }
    return answer;
  }

  async describeAll(names: Iterable<string>): Promise<Map<string, TopicInfo | undefined>> {
    const unique = [...new Set(names)];
    const infos = await Promise.all(unique.map((name) => this.describe(name)));
    return new Map(unique.map((name, i) => [name, infos[i]]));
  }
}
