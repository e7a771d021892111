export { GroupCoordinator } from './coordinator.js';
export type { GroupCoordinatorOptions } from './coordinator.js';
export { rangeAssignor, uniformAssignor } from './assignors.js';
export type { Assignor, AssignmentSpec, AssignorMember } from './assignors.js';
export { groupKeys } from './group-items.js';
export { parseCommitRequest, parseHeartbeatRequest, parseResetRequest, validateGroupId } from './requests.js';
export * from './types.js';
