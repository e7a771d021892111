/* global URL, sessionStorage, document, window, location, localStorage, fetch, Node, atob, TextDecoder, FormData, URLSearchParams, setInterval, clearInterval -- a browser module */
// The Sluice console: plain ES modules against the HTTP API (docs/api.md), no build step. Each page
// is a function of the hash route that fetches what it shows and renders it with DOM calls (never
// innerHTML with data, so record keys and values cannot inject markup).
import { signRequest } from './sigv4.js';

// uPlot's minified build (51 KB; its ES module build is not minified) loads first as a classic script.
const { uPlot } = globalThis;

// Same origin under `npm start`; a static deployment names its API with ?api=… (kept in localStorage).
const params = new URLSearchParams(location.search);
if (params.get('api')) localStorage.setItem('sluice.api', params.get('api').replace(/\/+$/, ''));
const API = localStorage.getItem('sluice.api') ?? '';

const main = document.getElementById('main');
const status = document.getElementById('status');
/** Timers and charts of the page on screen, cleared when the route changes. */
let pageCleanup = [];
/** Lag history per group, kept while the console is open: {times: [], series: Map<label, number[]>}. */
const lagHistory = new Map();

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${status}`);
    this.status = status;
  }
}

/** The user's AWS credentials for an API with IAM authorization, kept for this browser tab only. */
const credentials = () => JSON.parse(sessionStorage.getItem('sluice.credentials') ?? 'null');

const api = async (method, path, body) => {
  const url = new URL(`${API}/v1${path}`, location.href).href;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const creds = credentials();
  const response = await fetch(url, {
    method,
    headers: {
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      ...(creds ? await signRequest(method, url, payload, creds) : {}),
    },
    ...(payload === undefined ? {} : { body: payload }),
  });
  const text = await response.text();
  const json = text ? JSON.parse(text) : undefined;
  if (!response.ok) throw new ApiError(response.status, json);
  return json;
};
const enc = encodeURIComponent;

/** h('td', {class: 'num'}, 'text', child…): a DOM element; strings become text nodes. */
const h = (tag, attrs = {}, ...children) => {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name === 'value') el.value = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
};

const table = (caption, headers, rows) =>
  h(
    'table',
    {},
    h('caption', { class: 'muted' }, caption),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        headers.map((c) => h('th', { scope: 'col', class: c.num ? 'num' : undefined }, c.label ?? c)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.length === 0
        ? h('tr', {}, h('td', { colspan: headers.length, class: 'muted' }, 'None'))
        : rows.map((cells) =>
            h(
              'tr',
              {},
              cells.map((cell, i) => h('td', { class: headers[i]?.num ? 'num' : undefined }, cell)),
            ),
          ),
    ),
  );

const stateTag = (state) => h('span', { class: `state-${state}` }, state);
const list = (values) => (values.length === 0 ? '—' : values.join(', '));
const num = (label) => ({ label, num: true });
const say = (text) => (status.textContent = text);

const render = (title, ...content) => {
  document.title = `${title} · Sluice console`;
  main.replaceChildren(h('h1', {}, title), ...content);
};

// ---- pages ----

const clusterPage = async () => {
  const [cluster, topics, groups] = await Promise.all([
    api('GET', '/cluster'),
    api('GET', '/topics'),
    api('GET', '/groups'),
  ]);
  render(
    'Cluster',
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Cluster id'),
      h('dd', {}, h('code', {}, cluster.clusterId)),
      h('dt', {}, 'Version'),
      h('dd', {}, cluster.version),
      h('dt', {}, 'Topics'),
      h('dd', {}, String(topics.topics.length)),
      h('dt', {}, 'Partitions'),
      h('dd', {}, String(topics.topics.reduce((n, t) => n + t.partitions, 0))),
      h('dt', {}, 'Consumer groups'),
      h('dd', {}, String(groups.groups.length)),
    ),
    h('h2', {}, 'Stores'),
    table(
      'Replica stores (S3 buckets) of the cluster',
      ['Id', 'Kind', 'Zone', 'Location'],
      cluster.stores.map((s) => [h('code', {}, s.id), s.kind ?? 'standard', s.zone ?? '—', s.location]),
    ),
  );
};

const topicsPage = async () => {
  const { topics } = await api('GET', '/topics');
  render(
    'Topics',
    table(
      'Topics',
      ['Name', num('Partitions'), num('Replication factor')],
      topics.map((t) => [
        h('a', { href: `#/topics/${enc(t.name)}` }, t.name),
        t.partitions,
        t.replicationFactor,
      ]),
    ),
  );
};

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
/** 1536 → "1.5 KiB". */
const bytes = (n) => {
  let value = n;
  let unit = 0;
  for (; value >= 1024 && unit < UNITS.length - 1; unit++) value /= 1024;
  return unit === 0 ? `${n} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
};
const time = (ms) =>
  ms < 0 ? '—' : h('time', { datetime: new Date(ms).toISOString() }, new Date(ms).toISOString());

/** One partition's segments: rolled ones (remote tier) then the active one (local), in offset order. */
const segmentsTable = (p) =>
  table(
    `Partition ${p.partition}: ${p.segments.length} segment(s), ${bytes(p.sizeBytes)}, offsets ${p.logStartOffset}–${p.logEndOffset}`,
    [
      num('Base offset'),
      num('End offset'),
      num('Records'),
      num('Batches'),
      num('Size'),
      'First timestamp',
      'Max timestamp',
      'Tier',
      'Rolled',
    ],
    p.segments.map((g) => [
      g.baseOffset,
      g.endOffset,
      g.records,
      g.batches,
      bytes(g.sizeBytes),
      time(g.firstTimestamp),
      time(g.maxTimestamp),
      g.tier === 'remote' ? 'remote (segment store)' : 'local (active)',
      g.rolledAt === undefined ? '—' : time(g.rolledAt),
    ]),
  );

const topicPage = async (name) => {
  const [topic, segments] = await Promise.all([
    api('GET', `/topics/${enc(name)}`),
    api('GET', `/topics/${enc(name)}/segments`),
  ]);
  const sizeOf = new Map(segments.partitions.map((p) => [p.partition, p.sizeBytes]));
  render(
    `Topic ${topic.name}`,
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Topic id'),
      h('dd', {}, h('code', {}, topic.topicId)),
      h('dt', {}, 'Replication factor'),
      h('dd', {}, String(topic.replicationFactor)),
    ),
    h('p', {}, h('a', { href: `#/messages?topic=${enc(topic.name)}` }, 'Browse messages')),
    h('h2', {}, 'Partitions'),
    table(
      'Partitions: leader, replicas, in-sync and out-of-sync replicas, offsets',
      [
        'Partition',
        'Leader',
        num('Leader epoch'),
        'Replicas',
        'ISR',
        'OSR',
        num('Log end offset'),
        num('High watermark'),
        num('Log start offset'),
        num('Size'),
      ],
      topic.partitions.map((p) => [
        p.partition,
        h('code', {}, p.leader),
        p.leaderEpoch,
        list(p.replicas),
        list(p.isr),
        p.osr.length === 0 ? '—' : h('span', { class: 'error' }, list(p.osr)),
        p.logEndOffsets?.[p.leader] ?? p.highWatermark,
        p.highWatermark,
        p.logStartOffset,
        bytes(sizeOf.get(p.partition) ?? 0),
      ]),
    ),
    h('h2', {}, 'Segments'),
    h(
      'section',
      { id: 'segments', 'aria-label': 'Segments per partition' },
      segments.partitions.map(segmentsTable),
    ),
    h('h2', {}, 'Configs'),
    table(
      'Topic configs',
      ['Name', 'Value'],
      Object.entries(topic.configs)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [h('code', {}, k), v]),
    ),
  );
};

// Values arrive base64 (exact bytes) and are shown as text, JSON or hex.
const bytesOf = (b64) => (b64 === null ? null : Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
const utf8 = new TextDecoder('utf-8', { fatal: false });
const show = (b64, view, tag = 'pre') => {
  const bytes = bytesOf(b64);
  if (bytes === null) return h('span', { class: 'muted' }, 'null');
  if (view === 'hex')
    return h(tag, { class: 'value' }, Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(' '));
  const text = utf8.decode(bytes);
  if (tag !== 'pre') return h(tag, {}, text);
  if (view === 'json') {
    try {
      return h('pre', { class: 'value' }, JSON.stringify(JSON.parse(text), null, 2));
    } catch {
      return h('pre', { class: 'value' }, h('span', { class: 'error' }, 'not JSON: '), text);
    }
  }
  return h('pre', { class: 'value' }, text);
};

const messagesPage = async (query) => {
  const { topics } = await api('GET', '/topics');
  const topic = query.get('topic') ?? topics[0]?.name ?? '';
  const by = query.get('by') ?? 'offset';
  const view = query.get('view') ?? 'text';
  const field = (label, input) => h('label', {}, label, input);
  const browse = h(
    'form',
    { class: 'panel', id: 'browse', 'aria-label': 'Find records' },
    field(
      'Topic',
      h(
        'select',
        { name: 'topic', id: 'browse-topic' },
        topics.map((t) => h('option', { value: t.name, selected: t.name === topic }, t.name)),
      ),
    ),
    field(
      'Partition',
      h('input', {
        name: 'partition',
        id: 'browse-partition',
        type: 'number',
        min: 0,
        value: query.get('partition') ?? '0',
        required: true,
      }),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Start at'),
      h(
        'label',
        {},
        h('input', { type: 'radio', name: 'by', value: 'offset', checked: by === 'offset' }),
        'offset',
      ),
      h(
        'label',
        {},
        h('input', { type: 'radio', name: 'by', value: 'timestamp', checked: by === 'timestamp' }),
        'timestamp (ms or ISO)',
      ),
    ),
    field(
      'Offset or timestamp',
      h('input', { name: 'at', id: 'browse-at', value: query.get('at') ?? '0', required: true }),
    ),
    field(
      'Max records',
      h('input', {
        name: 'limit',
        id: 'browse-limit',
        type: 'number',
        min: 1,
        max: 500,
        value: query.get('limit') ?? '20',
      }),
    ),
    field(
      'Show values as',
      h(
        'select',
        { name: 'view', id: 'browse-view' },
        ['text', 'json', 'hex'].map((v) => h('option', { value: v, selected: v === view }, v)),
      ),
    ),
    h('button', { type: 'submit' }, 'Find'),
  );
  browse.addEventListener('submit', (e) => {
    e.preventDefault();
    const data = new FormData(browse);
    location.hash = `#/messages?${new URLSearchParams([...data].map(([k, v]) => [k, String(v)]))}`;
  });
  const results = h('section', { 'aria-label': 'Records', id: 'records' });
  const produce = produceForm(topics, topic);
  render('Messages', browse, results, h('h2', {}, 'Produce a record'), produce);
  if (!query.has('at') || !topic) return;
  const partition = Number(query.get('partition') ?? 0);
  let offset;
  const at = (query.get('at') ?? '').trim();
  if (by === 'timestamp') {
    const ms = /^\d+$/.test(at) ? Number(at) : Date.parse(at);
    if (!Number.isFinite(ms)) throw new Error('the timestamp is neither milliseconds nor an ISO date');
    const found = await api('GET', `/topics/${enc(topic)}/partitions/${partition}/offsets?at=${ms}`);
    if (found.offset === null) {
      results.replaceChildren(h('p', {}, `No record at or after ${new Date(ms).toISOString()}.`));
      return;
    }
    offset = found.offset;
  } else offset = Number(at);
  const limit = Math.min(500, Math.max(1, Number(query.get('limit') ?? 20)));
  const fetched = await api(
    'GET',
    `/topics/${enc(topic)}/partitions/${partition}/records?offset=${offset}&maxWaitMs=0&encoding=base64`,
  );
  const records = fetched.records.slice(0, limit);
  results.replaceChildren(
    h(
      'p',
      { class: 'muted' },
      `Partition ${partition}: log start ${fetched.logStartOffset}, high watermark ${fetched.highWatermark}.`,
    ),
    table(
      `${records.length} record(s) from offset ${offset}`,
      [num('Offset'), 'Timestamp', 'Key', 'Headers', 'Value'],
      records.map((r) => [
        r.offset,
        h('time', { datetime: new Date(r.timestamp).toISOString() }, new Date(r.timestamp).toISOString()),
        show(r.key, view === 'hex' ? 'hex' : 'text', 'code'),
        r.headers.length === 0
          ? '—'
          : h(
              'ul',
              {},
              r.headers.map((hd) =>
                h('li', {}, `${hd.key}: `, show(hd.value, view === 'hex' ? 'hex' : 'text', 'code')),
              ),
            ),
        show(r.value, view),
      ]),
    ),
  );
};

const produceForm = (topics, topic) => {
  const form = h(
    'form',
    { class: 'panel', id: 'produce', 'aria-label': 'Produce a record' },
    h(
      'label',
      {},
      'Topic',
      h(
        'select',
        { name: 'topic', id: 'produce-topic' },
        topics.map((t) => h('option', { value: t.name, selected: t.name === topic }, t.name)),
      ),
    ),
    h(
      'label',
      {},
      'Partition (empty: by key)',
      h('input', { name: 'partition', id: 'produce-partition', type: 'number', min: 0 }),
    ),
    h('label', {}, 'Key', h('input', { name: 'key', id: 'produce-key' })),
    h('label', {}, 'Value', h('textarea', { name: 'value', id: 'produce-value', rows: 3, cols: 40 })),
    h(
      'label',
      {},
      'Headers (key=value per line)',
      h('textarea', { name: 'headers', id: 'produce-headers', rows: 3, cols: 24 }),
    ),
    h(
      'label',
      {},
      'Value is',
      h(
        'select',
        { name: 'encoding', id: 'produce-encoding' },
        h('option', { value: 'utf8' }, 'text'),
        h('option', { value: 'json' }, 'JSON'),
      ),
    ),
    h('button', { type: 'submit' }, 'Produce'),
    h('output', { id: 'produce-result', for: 'produce-value', 'aria-live': 'polite' }),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const output = form.querySelector('output');
    try {
      const value = String(data.get('value'));
      const record = {
        key: data.get('key') === '' ? null : String(data.get('key')),
        value: data.get('encoding') === 'json' ? JSON.parse(value) : value,
        headers: String(data.get('headers'))
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => ({
            key: l.slice(0, l.indexOf('=') < 0 ? l.length : l.indexOf('=')).trim(),
            value: l.indexOf('=') < 0 ? null : l.slice(l.indexOf('=') + 1),
          })),
        ...(data.get('partition') === '' ? {} : { partition: Number(data.get('partition')) }),
      };
      const reply = await api('POST', `/topics/${enc(String(data.get('topic')))}/records`, {
        records: [record],
        encoding: data.get('encoding'),
      });
      const result = reply.results[0];
      if (result.error) throw new ApiError(400, result);
      output.className = '';
      output.textContent = `Written to partition ${result.partition} at offset ${result.offset}.`;
    } catch (error) {
      output.className = 'error';
      output.textContent = error.message;
    }
  });
  return form;
};

const groupsPage = async () => {
  const { groups } = await api('GET', '/groups');
  render(
    'Consumer groups',
    table(
      'Consumer groups',
      ['Group', 'State', num('Members')],
      groups.map((g) => [
        h('a', { href: `#/groups/${enc(g.groupId)}` }, g.groupId),
        stateTag(g.state),
        typeof g.members === 'number' ? g.members : g.members.length,
      ]),
    ),
  );
};

const assignmentText = (assignment) =>
  (assignment?.topicPartitions ?? assignment ?? [])
    .map?.((tp) => `${tp.topic}: ${tp.partitions.join(', ')}`)
    .join('; ') || '—';

const REFRESH_MS = 2000;

const groupPage = async (groupId) => {
  const history = lagHistory.get(groupId) ?? { times: [], series: new Map() };
  lagHistory.set(groupId, history);
  const membersSection = h('section', { 'aria-label': 'Members' });
  const offsetsSection = h('section', { 'aria-label': 'Committed offsets and lag' });
  const chartBox = h('figure', {
    class: 'chart',
    id: 'lag-chart',
    'aria-label': 'Lag over time per partition',
  });
  const summary = h('p', { id: 'lag-total' });
  render(
    `Group ${groupId}`,
    summary,
    h('h2', {}, 'Lag over time'),
    chartBox,
    h('h2', {}, 'Members'),
    membersSection,
    h('h2', {}, 'Offsets'),
    offsetsSection,
  );
  let chart;
  let labels = '';
  const refresh = async () => {
    const group = await api('GET', `/groups/${enc(groupId)}`);
    const total = group.offsets.reduce((n, o) => n + (o.lag ?? 0), 0);
    summary.replaceChildren(
      'State ',
      stateTag(group.state),
      ` · epoch ${group.groupEpoch} · assignor ${group.assignor ?? '—'} · total lag `,
      h('strong', { id: 'lag-value' }, String(total)),
    );
    membersSection.replaceChildren(
      table(
        'Members and their assignments',
        ['Member id', 'Instance id', num('Epoch'), 'Subscribed topics', 'Assignment'],
        group.members.map((m) => [
          h('code', {}, m.memberId),
          m.instanceId ?? '—',
          m.memberEpoch,
          list(m.subscribedTopics ?? []),
          assignmentText(m.assignment),
        ]),
      ),
    );
    offsetsSection.replaceChildren(
      table(
        'Committed offsets, high watermarks and lag per partition',
        ['Topic', num('Partition'), num('Committed offset'), num('High watermark'), num('Lag')],
        group.offsets.map((o) => [
          o.topic,
          o.partition,
          o.committedOffset ?? '—',
          o.highWatermark,
          o.lag ?? '—',
        ]),
      ),
    );
    history.times.push(Date.now() / 1000);
    for (const o of group.offsets) {
      const key = `${o.topic}-${o.partition}`;
      if (!history.series.has(key)) history.series.set(key, new Array(history.times.length - 1).fill(null));
    }
    for (const [key, values] of history.series) {
      const o = group.offsets.find((x) => `${x.topic}-${x.partition}` === key);
      values.push(o ? (o.lag ?? null) : null);
    }
    if (history.times.length > 900) {
      history.times.shift();
      for (const values of history.series.values()) values.shift();
    }
    chartBox.dataset.points = String(history.times.length);
    // Total lag at each point, newest last: what the chart shows, readable without pixels.
    history.totals = [...(history.totals ?? []), total].slice(-history.times.length);
    chartBox.dataset.totals = history.totals.join(',');
    const data = [history.times, ...history.series.values()];
    const now = [...history.series.keys()].join();
    if (!chart || now !== labels) {
      chart?.destroy();
      labels = now;
      chart = new uPlot(
        {
          width: Math.min(1100, main.clientWidth - 40),
          height: 260,
          scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
          axes: [{}, { label: 'records behind' }],
          series: [
            {},
            ...[...history.series.keys()].map((label, i) => ({
              label,
              stroke: PALETTE[i % PALETTE.length],
              width: 2,
            })),
          ],
        },
        data,
        chartBox,
      );
    } else chart.setData(data);
  };
  await refresh();
  const timer = setInterval(() => refresh().catch((e) => say(e.message)), REFRESH_MS);
  pageCleanup.push(
    () => clearInterval(timer),
    () => chart?.destroy(),
  );
};
const PALETTE = ['#0b5cad', '#a4161a', '#1b6b2f', '#7a4a00', '#5a2d82', '#00626b'];

const connectorsPage = async () => {
  const connectors = await api('GET', '/connect/connectors?expand=status,info');
  const rows = Object.entries(connectors).sort(([a], [b]) => a.localeCompare(b));
  const action = (name, verb, method, path) =>
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        'aria-label': `${verb} ${name}`,
        onclick: async () => {
          try {
            await api(method, `/connect/connectors/${enc(name)}${path}`);
            say(`${verb}: ${name}`);
            await route();
          } catch (error) {
            say(error.message);
          }
        },
      },
      verb,
    );
  render(
    'Connectors',
    table(
      'Connectors, their state and tasks',
      ['Name', 'Type', 'Class', 'State', 'Tasks', 'Actions'],
      rows.map(([name, entry]) => [
        name,
        entry.status?.type ?? entry.info?.type ?? '—',
        h('code', {}, entry.info?.config?.['connector.class'] ?? '—'),
        h('span', { 'data-connector-state': name }, stateTag(entry.status?.connector?.state ?? 'UNKNOWN')),
        (entry.status?.tasks ?? []).length === 0
          ? '—'
          : h(
              'ul',
              {},
              entry.status.tasks.map((t) =>
                h(
                  'li',
                  {},
                  `${t.id}: `,
                  stateTag(t.state),
                  t.trace ? h('pre', { class: 'value error' }, t.trace.split('\n')[0]) : '',
                ),
              ),
            ),
        h(
          'span',
          {},
          action(name, 'Pause', 'PUT', '/pause'),
          ' ',
          action(name, 'Resume', 'PUT', '/resume'),
          ' ',
          action(name, 'Restart', 'POST', '/restart?includeTasks=true'),
        ),
      ]),
    ),
  );
};

const streamsPage = async () => {
  const { applications } = await api('GET', '/streams');
  render(
    'Streams applications',
    table(
      'Streams applications (consumer groups whose application registered its state stores)',
      ['Application id', 'State', num('Members'), num('Partitions'), num('Stores')],
      applications.map((a) => [
        h('a', { href: `#/streams/${enc(a.applicationId)}` }, a.applicationId),
        stateTag(a.state),
        a.members,
        a.partitions,
        a.stores,
      ]),
    ),
  );
};

/** A store's key or value as its serde renders it: text as it is, anything else as JSON. */
const storeText = (value) => (typeof value === 'string' ? value : JSON.stringify(value));
const KEYS_SHOWN = 50;

const streamsAppPage = async (appId, query) => {
  const base = `/streams/${enc(appId)}`;
  const app = await api('GET', base);
  const keyValueStores = app.stores.filter((s) => s.kind === 'key-value');
  const pages = await Promise.all(
    keyValueStores.map((s) => api('GET', `${base}/stores/${enc(s.name)}/keys?limit=${KEYS_SHOWN}`)),
  );
  const chosen = app.stores.find((s) => s.name === query.get('store')) ?? app.stores[0];
  const lookup = h(
    'form',
    { class: 'panel', id: 'lookup', 'aria-label': 'Look up a key' },
    h(
      'label',
      {},
      'Store',
      h(
        'select',
        { name: 'store', id: 'lookup-store' },
        app.stores.map((s) =>
          h('option', { value: s.name, selected: s === chosen }, `${s.name} (${s.kind})`),
        ),
      ),
    ),
    h(
      'label',
      {},
      'Key',
      h('input', { name: 'key', id: 'lookup-key', value: query.get('key') ?? '', required: true }),
    ),
    h('button', { type: 'submit' }, 'Look up'),
  );
  lookup.addEventListener('submit', (e) => {
    e.preventDefault();
    const data = new FormData(lookup);
    location.hash = `#/streams/${enc(appId)}?${new URLSearchParams([...data].map(([k, v]) => [k, String(v)]))}`;
  });
  const answer = h('section', {
    id: 'lookup-result',
    'aria-label': 'The key’s value',
    'aria-live': 'polite',
  });
  render(
    `Streams application ${app.applicationId}`,
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Group state'),
      h('dd', {}, stateTag(app.state)),
      h('dt', {}, 'Members'),
      h('dd', {}, String(app.members)),
      h('dt', {}, 'Partitions (tasks per sub-topology)'),
      h('dd', {}, String(app.partitions)),
    ),
    h(
      'p',
      {},
      h('a', { href: `#/groups/${enc(app.applicationId)}` }, 'Its consumer group: members, offsets and lag'),
    ),
    h('h2', {}, 'Tasks'),
    table(
      'Tasks (sub-topology × partition), the member running each, and the epoch of its lease',
      ['Task', num('Sub-topology'), num('Partition'), 'Owner', num('Lease epoch')],
      app.tasks.map((t) => [
        h('code', {}, t.taskId),
        t.subTopology,
        t.partition,
        t.owner === null ? '—' : h('code', {}, t.owner),
        t.leaseEpoch ?? '—',
      ]),
    ),
    h('h2', {}, 'State stores'),
    table(
      'State stores, their kind and serdes',
      ['Store', 'Kind', num('Sub-topology'), 'Key serde', 'Value serde'],
      app.stores.map((s) => [h('code', {}, s.name), s.kind, s.subTopology, s.keyFormat, s.valueFormat]),
    ),
    h('h2', {}, 'Look up a key'),
    lookup,
    answer,
    ...keyValueStores.flatMap((s, i) => [
      h('h2', {}, `Keys of ${s.name}`),
      h(
        'section',
        { class: 'store-keys', 'data-store': s.name, 'aria-label': `Keys of ${s.name}` },
        table(
          pages[i].next === null
            ? `${pages[i].entries.length} key(s), in key order`
            : `The first ${pages[i].entries.length} keys, in key order (more from ${pages[i].next})`,
          ['Key', 'Value', 'Timestamp'],
          pages[i].entries.map((e) => [
            h('code', {}, storeText(e.key)),
            storeText(e.value),
            time(e.timestamp),
          ]),
        ),
      ),
    ]),
  );
  if (!query.has('key') || !chosen) return;
  try {
    const found = await api('GET', `${base}/stores/${enc(chosen.name)}/keys/${enc(query.get('key'))}`);
    answer.replaceChildren(
      'windows' in found
        ? table(
            `Windows of ${storeText(found.key)} in ${chosen.name}`,
            ['Window start', 'Window end', 'Value', 'Timestamp'],
            found.windows.map((w) => [
              time(w.windowStart),
              w.windowEnd === undefined ? '—' : time(w.windowEnd),
              storeText(w.value),
              time(w.timestamp),
            ]),
          )
        : h(
            'dl',
            { class: 'facts' },
            h('dt', {}, 'Key'),
            h('dd', {}, h('code', {}, storeText(found.key))),
            h('dt', {}, 'Value'),
            h('dd', { id: 'lookup-value' }, storeText(found.value)),
            h('dt', {}, 'Timestamp'),
            h('dd', {}, time(found.timestamp)),
          ),
    );
  } catch (error) {
    answer.replaceChildren(h('p', { class: 'error' }, error.message));
  }
};

const credentialsPage = async () => {
  const saved = credentials();
  const field = (label, name, attrs = {}) =>
    h(
      'label',
      {},
      label,
      h('input', { name, id: `cred-${name}`, value: saved?.[name] ?? '', autocomplete: 'off', ...attrs }),
    );
  const form = h(
    'form',
    { class: 'panel', id: 'credentials', 'aria-label': 'AWS credentials' },
    field('Access key id', 'accessKeyId', { required: true }),
    field('Secret access key', 'secretAccessKey', { type: 'password', required: true }),
    field('Session token (temporary credentials)', 'sessionToken', { type: 'password' }),
    field('Region', 'region', { required: true, value: saved?.region ?? 'us-east-1' }),
    h('button', { type: 'submit' }, 'Use these credentials'),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => (sessionStorage.removeItem('sluice.credentials'), route()),
      },
      'Forget them',
    ),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const data = Object.fromEntries([...new FormData(form)].map(([k, v]) => [k, String(v).trim()]));
    if (!data.sessionToken) delete data.sessionToken;
    sessionStorage.setItem('sluice.credentials', JSON.stringify(data));
    location.hash = '#/cluster';
  });
  render(
    'Credentials',
    h(
      'p',
      {},
      saved
        ? `Requests are signed (SigV4) as ${saved.accessKeyId}.`
        : 'Requests are not signed: fine for an open local stack.',
      ' An API with IAM authorization (SLUICE_AUTH=iam, or deployed) needs your credentials; they stay in this tab (sessionStorage) and are sent only as signatures.',
    ),
    form,
  );
};

// ---- routing ----

const route = async () => {
  for (const stop of pageCleanup.splice(0)) stop();
  const [path, queryText] = location.hash.replace(/^#/, '').split('?');
  const query = new URLSearchParams(queryText ?? '');
  const parts = (path || '/cluster').split('/').filter(Boolean).map(decodeURIComponent);
  for (const link of document.querySelectorAll('nav a')) {
    if (link.getAttribute('href') === `#/${parts[0] ?? 'cluster'}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  delete main.dataset.page;
  say('');
  try {
    if (parts[0] === 'topics' && parts[1]) await topicPage(parts[1]);
    else if (parts[0] === 'topics') await topicsPage();
    else if (parts[0] === 'messages') await messagesPage(query);
    else if (parts[0] === 'groups' && parts[1]) await groupPage(parts[1]);
    else if (parts[0] === 'groups') await groupsPage();
    else if (parts[0] === 'connectors') await connectorsPage();
    else if (parts[0] === 'streams' && parts[1]) await streamsAppPage(parts[1], query);
    else if (parts[0] === 'streams') await streamsPage();
    else if (parts[0] === 'credentials') await credentialsPage();
    else await clusterPage();
    main.dataset.page = parts[0] ?? 'cluster';
  } catch (error) {
    render('Error', h('p', { class: 'error', role: 'alert' }, error.message));
  }
};

document.getElementById('endpoint').textContent = API ? `API: ${API}` : '';
window.addEventListener('hashchange', () => void route());
void route();
