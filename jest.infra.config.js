/** `npm run test:infra`: the *.infra.test.ts suites, on Kafka, MongoDB and Redis. The kinds are defined in jest.config.js. */
const { projects, ...options } = require('./jest.config.js');

module.exports = { ...options, ...projects.find((project) => project.displayName === 'infra') };
