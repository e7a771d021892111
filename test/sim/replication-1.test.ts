/** Seeds 1..250 of the replication simulation (two files, so the sim project runs them in parallel). */
import { replicationSuite } from '../support/replication-suite.js';

replicationSuite('test/sim/replication-1.test.ts', 1, 250);
