/** Seeds 251..500 of the replication simulation (two files, so the sim project runs them in parallel). */
import { replicationSuite } from '../support/replication-suite.js';

replicationSuite('test/sim/replication-2.test.ts', 251, 250);
