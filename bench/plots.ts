/**
 * The report's plots, drawn from the saved result documents (so `bench/plot.ts` can redraw them from
 * bench/results/ without running anything again).
 */
import { lineChart } from './svg.js';

const MIB = 2 ** 20;
const kib = (bytes: number) => (bytes >= MIB ? `${bytes / MIB} MiB` : `${bytes / 1024} KiB`);
const round1 = (v: number) => Math.round(v * 10) / 10;

/** Rates and latencies per 10 s window of one OMB result document. */
export const ombPlots = (result: Record<string, unknown>, slug: string): { file: string; svg: string }[] => {
  const publishRate = result['publishRate'] as number[];
  const windows = publishRate.map((_, i) => (i + 1) * 10);
  const seriesOf = (field: string) =>
    ((result[field] as number[] | undefined) ?? []).map((v, i): [number, number] => [windows[i]!, v]);
  return [
    {
      file: `omb-${slug}-rates.svg`,
      svg: lineChart({
        title: `Publish and consume rate per 10 s window: ${slug}`,
        xLabel: 'seconds into the test (end of window)',
        yLabel: 'messages / s',
        series: [
          { name: 'publishRate', points: seriesOf('publishRate') },
          { name: 'consumeRate', points: seriesOf('consumeRate') },
        ],
        xTicks: windows,
      }),
    },
    {
      file: `omb-${slug}-latency.svg`,
      svg: lineChart({
        title: `Publish and end-to-end latency per 10 s window: ${slug}`,
        xLabel: 'seconds into the test (end of window)',
        yLabel: 'ms',
        series: [
          { name: 'publish p50', points: seriesOf('publishLatency50pct') },
          { name: 'publish p99', points: seriesOf('publishLatency99pct') },
          { name: 'end-to-end p50', points: seriesOf('endToEndLatency50pct') },
          { name: 'end-to-end p99', points: seriesOf('endToEndLatency99pct') },
        ],
        xTicks: windows,
      }),
    },
  ];
};

export interface CostPlotInput {
  readOn: string;
  curve: { batchBytes: number; modelled: { total: number } }[];
  compared: {
    traffic: { ingressMiBPerSec: number };
    kinesisOnDemand: { usdPerGiB: number };
    mskServerless: { usdPerGiB: number };
    confluentBasic: { usdPerGiB: number };
  };
}

/** Sluice's $/GiB over batch size beside the managed services at the run's throughput. */
export const costPlot = ({ readOn, curve, compared }: CostPlotInput): string => {
  const flat = (v: number): [number, number][] => curve.map((c) => [c.batchBytes, v]);
  const rate = round1(compared.traffic.ingressMiBPerSec);
  return lineChart({
    title: `USD per GiB written and read once (us-east-1 list prices, ${readOn})`,
    xLabel: 'produce batch size (bytes per request)',
    yLabel: 'USD per GiB',
    logX: true,
    xTick: kib,
    xTicks: curve.map((c) => c.batchBytes),
    series: [
      {
        name: 'Sluice (measured requests, modelled Lambda time)',
        points: curve.map((c) => [c.batchBytes, c.modelled.total]),
      },
      { name: `Kinesis on-demand at ${rate} MiB/s`, points: flat(compared.kinesisOnDemand.usdPerGiB) },
      { name: `MSK Serverless at ${rate} MiB/s`, points: flat(compared.mskServerless.usdPerGiB) },
      { name: `Confluent Basic at ${rate} MiB/s`, points: flat(compared.confluentBasic.usdPerGiB) },
    ],
  });
};

export interface ProducePlotInput {
  recordsPerRequest: number;
  recordBytes: number;
  phases: { producers: number; requestsPerSec: number }[];
  rawFloor: { concurrency: number; requestsPerSec: number }[];
}

/** Requests/s of Sluice and of the emulators alone at each concurrency. */
export const producePlot = ({ recordsPerRequest, recordBytes, phases, rawFloor }: ProducePlotInput): string =>
  lineChart({
    title: `Produce requests/s on one partition (${recordsPerRequest} × ${recordBytes} B records per request)`,
    xLabel: 'concurrent producers (writers)',
    yLabel: 'requests / s',
    xTicks: phases.map((p) => p.producers),
    series: [
      { name: 'Sluice (idempotent, acks=all)', points: phases.map((p) => [p.producers, p.requestsPerSec]) },
      ...(rawFloor.length > 0
        ? [
            {
              name: 'emulators alone (PUT + UpdateItem)',
              points: rawFloor.map((r): [number, number] => [r.concurrency, r.requestsPerSec]),
            },
          ]
        : []),
    ],
  });
