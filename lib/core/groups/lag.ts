/**
 * Consumer lag as Kafka's consumers report it (records-lag-max), measured by the maintenance run from
 * the groups' committed offsets and the partitions' high watermarks: no consumer process needs to be
 * up for its lag to show, which matters most when it is down.
 */
import type { Telemetry } from '../../ports/telemetry.js';
import type { GroupCoordinator } from './coordinator.js';

export interface LagReport {
  groups: number;
  partitions: number;
  /** The largest lag per group (the value its alarm compares with the group's threshold). */
  maxLag: Record<string, number>;
}

/** One records-lag-max per group, and one per group and partition it has committed offsets on. */
export const reportConsumerLag = async (
  groups: Pick<GroupCoordinator, 'listGroups' | 'describeGroup'>,
  telemetry: Telemetry,
): Promise<LagReport> => {
  const report: LagReport = { groups: 0, partitions: 0, maxLag: {} };
  for (const { groupId } of (await groups.listGroups()).groups) {
    const { offsets } = await groups.describeGroup(groupId);
    // A partition that no longer exists has no lag (null), and neither has a group with no offsets.
    const lags = offsets.filter((o) => o.lag !== null);
    if (lags.length === 0) continue;
    report.groups++;
    let max = 0;
    for (const o of lags) {
      telemetry.metric('records-lag-max', o.lag!, { group: groupId, topic: o.topic, partition: o.partition });
      max = Math.max(max, o.lag!);
      report.partitions++;
    }
    telemetry.metric('records-lag-max', max, { group: groupId });
    report.maxLag[groupId] = max;
  }
  return report;
};
