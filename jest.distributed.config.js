/** The distributed end-to-end test: separate processes on real servers, run on its own (it restarts Kafka). */
module.exports = require('./test/setup/separate-suite.js')('distributed', 'test/distributed');
