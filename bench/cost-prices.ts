/**
 * The price table every cost figure uses: us-east-1 list prices in USD, each with where it was read.
 * `PRICE_SOURCES` is what docs/cost.md prints; a price read only from a third-party transcription, or
 * not found at all, says so (`basis`), and the figures that use it inherit that label. Prices are not
 * fetched at run time: the benchmarks must give the same answer offline, and a price change should be
 * a reviewed commit, not a silent difference between two runs.
 */

export const PRICES = {
  readOn: '2026-12-01',
  region: 'us-east-1',
  s3: {
    perThousandPuts: 0.005,
    perThousandGets: 0.0004,
    perThousandLists: 0.005,
    /** First 50 TB per month. */
    standardPerGiBMonth: 0.023,
  },
  s3Express: {
    perGiBMonth: 0.11,
    perThousandPuts: 0.00113,
    perThousandGets: 0.00003,
    /** Charged on every byte of a PUT / GET (the FAQ's 10 KB example is charged too). */
    perGiBUploaded: 0.0032,
    perGiBRetrieved: 0.0006,
  },
  dynamodb: {
    perMillionWriteUnits: 0.625,
    perMillionReadUnits: 0.125,
    /** Transactional reads and writes cost twice the units (the adapters' meters already count it). */
    transactionFactor: 2,
    /** Beyond the first 25 GB per month, which the model does not subtract. */
    perGiBMonth: 0.25,
  },
  lambda: {
    perMillionRequests: 0.2,
    /** arm64, first 7.5 billion GB-s per month: what infra/ deploys. */
    perGbSecond: 0.0000133334,
    perGbSecondX86: 0.0000166667,
  },
  apiGateway: { perMillionRequests: 1.0, meteringIncrementBytes: 512 * 1024 },
  /**
   * API Gateway WebSocket APIs, us-east-1 list prices: messages (32 KB increments, first billion) and
   * connection minutes. Priced for the what-if of consumers that wait on a WebSocket the metadata
   * table's stream notifies; an assumption carried from AWS's pricing page as remembered, not read
   * this session.
   */
  webSocket: { perMillionMessages: 1.0, perMillionConnectionMinutes: 0.25 },
  /**
   * DynamoDB Streams read requests (GetRecords) beyond the free tier, $0.02 per 100,000: for the what-if
   * of a long poll that reads the table's stream instead of the partition items; as remembered, not
   * read this session. (A Lambda trigger's reads of the stream are free.)
   */
  dynamodbStreams: { perMillionReadRequests: 0.2 },
  kinesisOnDemand: {
    perStreamHour: 0.04,
    perGiBIn: 0.08,
    perGiBOut: 0.04,
    recordRoundingBytes: 1024,
    /** Extended retention, beyond 24 hours and up to 7 days. */
    perGiBMonthExtendedRetention: 0.1,
  },
  mskServerless: {
    perClusterHour: 0.75,
    perPartitionHour: 0.0015,
    perGiBIn: 0.1,
    perGiBOut: 0.05,
    perGiBMonth: 0.1,
  },
  confluentBasic: { perEckuHour: 0.14, freeEckus: 1, perGiBIn: 0.05, perGiBOut: 0.05, perGiBMonth: 0.08 },
  /** Data in/out is listed as $0.035–$0.050 per GB, falling with volume; the model takes the top. */
  confluentStandard: { perEckuHour: 0.75, freeEckus: 0, perGiBIn: 0.05, perGiBOut: 0.05, perGiBMonth: 0.03 },
} as const;

export type Prices = typeof PRICES;

/** The storage prices of the tiered-storage comparison (bench/segments.ts), from the same table. */
export const STORAGE_PRICES = {
  readOn: PRICES.readOn,
  s3StandardPerGiBMonth: PRICES.s3.standardPerGiBMonth,
  s3Express: PRICES.s3Express,
} as const;

/**
 * How a price is known: `primary` = read on the provider's own page or documentation; `secondary` =
 * the provider's page renders its price cells with scripts, so the figure is from a third-party
 * transcription or an older copy (named); `assumption` = not found in anything read.
 */
export type PriceBasis = 'primary' | 'secondary' | 'assumption';

export interface PriceSource {
  item: string;
  price: string;
  basis: PriceBasis;
  /** Page title and address as found with the search tool. */
  source: string;
  read: string;
}

const READ = PRICES.readOn;

export const PRICE_SOURCES: readonly PriceSource[] = [
  {
    item: 'S3 Standard storage',
    price: '$0.023 per GB-month (first 50 TB)',
    basis: 'secondary',
    source:
      'Amazon S3 pricing, https://aws.amazon.com/s3/pricing/ (cells unrendered in the copy read); figure from "S3 Data Storage | Cost", https://gist.github.com/EverettBerry/a37438006529a55f42da6fdbc44a505c',
    read: READ,
  },
  {
    item: 'S3 Standard PUT, COPY, POST, LIST / GET',
    price: '$0.005 / $0.0004 per 1,000 requests',
    basis: 'secondary',
    source:
      'Amazon S3 pricing, https://aws.amazon.com/s3/pricing/ (cells unrendered); PUT: the worked example of "Understanding per 1000 PUT COPY POST or LIST Requests in Amazon S3 Pricing", https://www.cloudkaramchari.com/blog/understanding-per-1000-put-copy-post-or-list-requests-in-amazon-s3-pricing/; GET: "S3 Express One Zone Pricing: The Request-Heavy Workload Calculus" ("$0.0004 per 1,000" on Standard), https://awsnegotiations.com/s3-express-one-zone-pricing.html',
    read: READ,
  },
  {
    item: 'S3 Express One Zone storage, PUT, GET, DELETE',
    price: '$0.11 per GB-month; $0.00113 / $0.00003 per 1,000 PUT / GET; DELETE free',
    basis: 'primary',
    source:
      'Amazon S3 FAQs, S3 Express One Zone billing examples 1 and 2 (US East (N. Virginia)), https://aws.amazon.com/s3/faqs/',
    read: READ,
  },
  {
    item: 'S3 Express One Zone data upload / retrieval',
    price: '$0.0032 / $0.0006 per GB, on every byte',
    basis: 'primary',
    source:
      'Amazon S3 FAQs, example 1 charges upload and retrieval on 10 KB requests, so the per-GB charge covers all bytes (the 512 KB threshold of "Ultimate Guide to S3 Express One Zone Costs", https://optiowl.cloud/blog/ultimate-guide-to-s3-express-one-zone-costs, Dec 2023, is the pre-2025 rule), https://aws.amazon.com/s3/faqs/',
    read: READ,
  },
  {
    item: 'S3 Express One Zone LIST',
    price: 'priced as a PUT ($0.00113 per 1,000)',
    basis: 'assumption',
    source: 'no Express LIST price found; S3 Standard bills LIST with PUT, so the model does the same',
    read: READ,
  },
  {
    item: 'DynamoDB on-demand write / read request units',
    price: '$0.625 / $0.125 per million; transactional requests 2× units',
    basis: 'secondary',
    source:
      'Amazon DynamoDB on-demand pricing, https://aws.amazon.com/dynamodb/pricing/on-demand/ (key terms: transactional write = 2 WRU, transactional read = 2 RRU; price cells unrendered); figures from "Amazon DynamoDB Pricing: On-Demand & Provisioned Plans", https://airbyte.com/data-engineering-resources/dynamodb-pricing (after the November 2024 50 % cut)',
    read: READ,
  },
  {
    item: 'DynamoDB storage',
    price: '$0.25 per GB-month after the first 25 GB',
    basis: 'primary',
    source:
      'Amazon DynamoDB pricing, "Pricing at a glance" (an older copy of the page), https://aws.amazon.com/dynamodb/pricing/',
    read: READ,
  },
  {
    item: 'Lambda requests',
    price: '$0.20 per million',
    basis: 'primary',
    source:
      '"Lambda - How AWS Pricing Works", https://docs.aws.amazon.com/whitepapers/latest/how-aws-pricing-works/lambda.html',
    read: READ,
  },
  {
    item: 'Lambda duration, arm64 / x86_64',
    price: '$0.0000133334 / $0.0000166667 per GB-s (first pricing tier)',
    basis: 'secondary',
    source:
      'AWS Lambda pricing, https://aws.amazon.com/lambda/pricing/ (cells unrendered); figures from "AWS Lambda Pricing Breakdown: Ultimate Guide 2024", https://cloudchipr.com/blog/aws-lambda-pricing (US East (N. Virginia))',
    read: READ,
  },
  {
    item: 'API Gateway HTTP API',
    price: '$1.00 per million (first 300 million), metered in 512 KB increments',
    basis: 'primary',
    source:
      'Best Practices for Designing Amazon API Gateway Private APIs, "Cost optimization" ("HTTP APIs are metered in 512 KB increments"), https://docs.aws.amazon.com/whitepapers/latest/best-practices-api-gateway-private-apis-integration/cost-optimization.html; $1.00 from "AWS API Gateway Pricing Explained", https://awsforengineers.com/blog/aws-api-gateway-pricing-explained',
    read: READ,
  },
  {
    item: 'Data transfer, Lambda ↔ S3 / DynamoDB, clients in the Region',
    price: '$0 (no VPC, no NAT gateway; public endpoints in the same Region)',
    basis: 'secondary',
    source:
      '"An overview of billing and pricing on AWS" (internet gateway to an AWS public service in the same Region: no data transfer charge), https://packtpub.com/en-gr/product/aws-certified-cloud-practitioner-exam-guide-9781801075930/chapter/chapter-15-billing-and-pricing-19/section/an-overview-of-billing-and-pricing-on-aws-ch19lvl1sec65; Amazon S3 FAQs (no charge between EC2 and S3 in the same Region). Cross-AZ reads of an Express directory bucket: no S3 charge found; Lambda outside a VPC pays no EC2 cross-AZ rate',
    read: READ,
  },
  {
    item: 'Kinesis Data Streams on-demand (Standard): stream-hour, data in',
    price: '$0.04 per stream-hour; $0.08 per GB in, each record rounded up to 1 KB',
    basis: 'primary',
    source:
      'AWS Big Data Blog, "Kinesis On-demand Advantage saves 60%+ on streaming costs" (2026-03-09, us-east-1), https://aws.amazon.com/blogs/big-data/kinesis-on-demand-advantage-saves-60-on-streaming-costs/; rounding: Amazon Kinesis Data Streams pricing, key terms, https://aws.amazon.com/kinesis/data-streams/pricing/',
    read: READ,
  },
  {
    item: 'Kinesis on-demand extended retention (24 h to 7 days)',
    price: '$0.10 per GB-month',
    basis: 'primary',
    source:
      'the same AWS Big Data Blog post ("$0.10 per GB of data stored beyond 24 hours, up to 7 days"; the model bills it per GB-month, as the pricing page meters storage)',
    read: READ,
  },
  {
    item: 'Kinesis on-demand data out (shared-throughput consumers)',
    price: '$0.04 per GB',
    basis: 'assumption',
    source:
      'not found in anything read this session (the pricing page renders its cells with scripts); carried from the 2026-11-29 table of bench/cost.ts',
    read: READ,
  },
  {
    item: 'MSK Serverless',
    price:
      '$0.75 per cluster-hour, $0.0015 per partition-hour, $0.10 per GiB in, $0.05 per GiB out, $0.10 per GiB-month',
    basis: 'secondary',
    source:
      'Amazon MSK pricing, https://aws.amazon.com/msk/pricing/ (dimensions only: cluster-hours, partition-hours, data in, data out, storage); figures from "Dimension | Price", https://gist.github.com/EverettBerry/d24aa940ad43c313803248cea6366682 (October 2022)',
    read: READ,
  },
  {
    item: 'Confluent Cloud Basic',
    price: 'first eCKU free, then $0.14 per eCKU-hour; $0.05 per GB in and out; $0.08 per GB-month',
    basis: 'secondary',
    source:
      'Confluent pricing, https://www.confluent.io/pricing/, as transcribed on 2026-08-27 in https://raw.githubusercontent.com/api-evangelist/confluent/refs/heads/main/plans/confluent-plans-pricing.yml; GB = 2^30 bytes per "Billing Dimensions in Confluent Cloud", https://docs.confluent.io/cloud/current/billing/billing-dimensions.html',
    read: READ,
  },
  {
    item: 'Confluent Cloud Standard',
    price: '$0.75 per eCKU-hour; $0.035–$0.050 per GB in and out (model: $0.050); $0.03 per GB-month',
    basis: 'secondary',
    source:
      'the same transcription of https://www.confluent.io/pricing/ (2026-08-27); its "~$385/Month" starting price implies less than $0.75 for a month of one eCKU (730 h × $0.75 = $547.50), so the eCKU price may be overstated',
    read: READ,
  },
  {
    item: 'Confluent eCKUs needed',
    price: 'one eCKU per 25 MB/s in or 75 MB/s out',
    basis: 'assumption',
    source:
      'no per-eCKU throughput found for Basic or Standard; the transcription gives Basic 250 MB/s in and 750 MB/s out per cluster, which this rate reaches at 10 eCKUs',
    read: READ,
  },
];

/**
 * What the observability of infra/monitoring.ts costs (us-east-1, read on the same date): EMF custom
 * metrics are billed per metric (each distinct name and dimension values) per month, prorated by the
 * hour; the EMF lines themselves as CloudWatch Logs ingestion; alarms per metric they read.
 */
export const OBSERVABILITY_PRICES = {
  /** First 10,000 metrics a month (the next 240,000 at $0.10). */
  customMetricPerMonth: 0.3,
  /** CloudWatch Logs, Standard class, data ingested (EMF documents are log events). */
  logsIngestPerGiB: 0.5,
  /** A standard-resolution alarm, per metric it reads (a metric math alarm pays for each). */
  alarmMetricPerMonth: 0.1,
  dashboardPerMonth: 3,
  /** X-Ray traces recorded; default sampling keeps one request a second plus 5% of the rest. */
  xrayPerMillionTraces: 5,
  source:
    'Amazon CloudWatch pricing, https://aws.amazon.com/cloudwatch/pricing/ (metrics, logs, alarms, dashboards; EMF metrics are custom metrics); AWS X-Ray pricing, https://aws.amazon.com/xray/pricing/; X-Ray default sampling rule, https://docs.aws.amazon.com/xray/latest/devguide/xray-console-sampling.html',
} as const;
