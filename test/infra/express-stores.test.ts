/**
 * Stores as S3 Express One Zone directory buckets in named availability zones (context
 * `sluice:expressZones`): one per zone, single-AZ, encrypted and retained, and every job that touches
 * objects may create sessions on them (ReadOnly for the read-only fetch job) and nothing else on S3.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { sluiceApp } from './app.js';
import type { PolicyStatement } from './template.js';
import { props, resources, resourcesOfType, roleStatements } from './template.js';

const ZONES = ['use1-az4', 'use1-az5', 'use1-az6'];
let template: Template;

const statementsOf = (job: string): PolicyStatement[] => {
  const [, fn] = resourcesOfType(template, 'AWS::Lambda::Function').find(([id]) =>
    id.startsWith(`Functions${job.charAt(0).toUpperCase()}${job.slice(1)}`),
  )!;
  const role = (props(fn).Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  return roleStatements(template, role);
};

const sessionGrants = (job: string) =>
  statementsOf(job).filter((s) => [s.Action].flat().includes('s3express:CreateSession'));

beforeAll(() => {
  template = Template.fromStack(
    sluiceApp({ context: { 'sluice:expressZones': ZONES.join(','), 'sluice:deletionProtection': 'false' } })
      .stack,
  );
});

describe('S3 Express One Zone stores', () => {
  it('creates one single-AZ directory bucket per zone, in order, and no Standard store bucket', () => {
    const dirs = resourcesOfType(template, 'AWS::S3Express::DirectoryBucket');
    expect(dirs.map(([id]) => id)).toEqual(['StorageStore0', 'StorageStore1', 'StorageStore2']);
    expect(dirs.map(([, r]) => props(r).LocationName)).toEqual(ZONES);
    for (const [, r] of dirs) {
      expect(props(r).DataRedundancy).toBe('SingleAvailabilityZone');
      expect(props(r).BucketEncryption).toEqual({
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      });
      expect(r.DeletionPolicy).toBe('Retain');
    }
    // The only Standard buckets: the access logs and the segment store (regional, not a replica store).
    expect(resourcesOfType(template, 'AWS::S3::Bucket').map(([id]) => id)).toEqual([
      'StorageAccessLogs',
      'Segments',
    ]);
  });

  it('passes the directory bucket names to the functions in store order', () => {
    const [, produce] = resourcesOfType(template, 'AWS::Lambda::Function').find(([id]) =>
      id.startsWith('FunctionsProduce'),
    )!;
    const env = (props(produce).Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env['SLUICE_BUCKETS']).toEqual({
      'Fn::Join': [',', [{ Ref: 'StorageStore0' }, { Ref: 'StorageStore1' }, { Ref: 'StorageStore2' }]],
    });
  });

  it('grants s3express:CreateSession on exactly the directory buckets, ReadOnly for fetch', () => {
    const arns = ZONES.map((_, i) => ({ 'Fn::GetAtt': [`StorageStore${i}`, 'Arn'] }));
    // groups: the transaction coordinator writes its markers to the stores.
    for (const job of ['produce', 'groups', 'maintenance', 'admin']) {
      const unconditional = sessionGrants(job).filter((s) => s.Condition === undefined);
      expect([job, unconditional.map((s) => s.Resource)]).toEqual([job, [arns]]);
    }
    const fetch = sessionGrants('fetch');
    expect(fetch.map((s) => [s.Resource, s.Condition])).toEqual([
      [arns, { StringEquals: { 's3express:SessionMode': 'ReadOnly' } }],
    ]);
    expect(sessionGrants('connect')).toEqual([]);
  });

  it('refuses a zone that is not an availability zone id, and a store count that disagrees', () => {
    expect(() => sluiceApp({ context: { 'sluice:expressZones': 'us-east-1a' } })).toThrow(
      /availability zone id/,
    );
    expect(() =>
      sluiceApp({ context: { 'sluice:expressZones': ZONES.join(','), 'sluice:storeCount': '2' } }),
    ).toThrow(/3 express zones but storeCount 2/);
    expect(resources(template)['StorageStore0']?.Type).toBe('AWS::S3Express::DirectoryBucket');
  });
});
