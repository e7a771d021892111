/** The installed connector plugins (Connect's plugin path), found by class name or alias. */
import type { AnyPlugin } from './plugin.js';
import { S3_SINK } from './connectors/s3-sink-plugin.js';
import { JDBC_SINK, JDBC_SOURCE } from './connectors/jdbc-plugins.js';
import { HTTP_SINK } from './connectors/http-sink-plugin.js';
import { LAMBDA_SINK } from './connectors/lambda-sink-plugin.js';
import { DYNAMODB_SOURCE } from './connectors/dynamodb-source-plugin.js';

export const PLUGINS: readonly AnyPlugin[] = [
  S3_SINK,
  JDBC_SOURCE,
  JDBC_SINK,
  HTTP_SINK,
  DYNAMODB_SOURCE,
  LAMBDA_SINK,
];

/** Connect matches the full class name, the simple name, or the simple name without "Connector". */
export const findPlugin = (name: string): AnyPlugin | undefined =>
  PLUGINS.find((p) => p.class === name || p.aliases.includes(name));
