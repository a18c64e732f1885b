/**
 * Decision 48's fault suite: the distributed runtime on the clustered engines of `scripts/infra.sh
 * cluster`, whose nodes it stops and starts; run alone (scripts/ci/faults.sh).
 */
module.exports = require('./test/setup/separate-suite.js')('faults', 'test/faults');
