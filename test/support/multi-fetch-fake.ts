/**
 * For fake servers that answer the single-partition fetch: POST /v1/fetch answered by asking the fake
 * for each partition (no wait), as the server's Fetch answers (docs/api.md "Fetch many partitions").
 * With every partition empty and maxWaitMs > 0 it waits a few ms (or until cancelled) and answers
 * empty, like a long poll that found nothing.
 */
import type { FetchLike } from '../../sdk/transport.js';

interface Asked {
  topic: string;
  partition: number;
  offset: number;
}

export const withMultiFetch =
  (inner: FetchLike): FetchLike =>
  async (input, init) => {
    const url = new URL(input);
    if (url.pathname !== '/v1/fetch') return inner(input, init);
    const body = JSON.parse(String(init.body)) as { partitions: Asked[]; maxWaitMs?: number };
    const answers: Record<string, unknown>[] = [];
    for (const p of body.partitions) {
      const single = new URL(
        `/v1/topics/${encodeURIComponent(p.topic)}/partitions/${p.partition}/records`,
        url,
      );
      single.search = new URLSearchParams({ offset: String(p.offset), maxWaitMs: '0' }).toString();
      const r = await inner(single.toString(), {
        method: 'GET',
        headers: { accept: 'application/vnd.kafka.record-batch' },
      });
      const bytes = new Uint8Array(await r.arrayBuffer());
      const id = { topic: p.topic, partition: p.partition };
      if (r.status !== 200) {
        const envelope = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
        const { error, ...bounds } = envelope;
        answers.push({ ...id, error, ...bounds });
        continue;
      }
      answers.push({
        ...id,
        highWatermark: Number(r.headers.get('sluice-high-watermark')),
        logStartOffset: Number(r.headers.get('sluice-log-start-offset')),
        nextOffset: Number(r.headers.get('sluice-next-offset')),
        recordBatches: Buffer.from(bytes).toString('base64'),
      });
    }
    if ((body.maxWaitMs ?? 0) > 0 && answers.every((a) => a.recordBatches === '')) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (init.signal?.aborted) throw new DOMException('aborted', 'AbortError');
    }
    return new Response(JSON.stringify({ partitions: answers }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  };
