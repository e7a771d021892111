/**
 * Vitest global setup for the contract and integration projects: starts DynamoDB Local and s3rver on
 * free ports with throwaway data and provides their endpoints (`inject('dynamodbEndpoint')`). Tests
 * create their own uniquely named tables and buckets.
 */
import type { TestProject } from 'vitest/node';
import { startEmulators } from '../../local/emulators.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const lines: string[] = [];
  const emulators = await startEmulators({
    log: (line) => void (lines.length < 200 && lines.push(line)),
  }).catch((error: unknown) => {
    throw new Error(`could not start the storage emulators:\n${lines.join('\n')}`, { cause: error });
  });
  project.provide('dynamodbEndpoint', emulators.dynamodbEndpoint);
  project.provide('s3Endpoint', emulators.s3Endpoint);
  return () => emulators.stop();
}
