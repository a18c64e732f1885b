/** `npm run test:e2e`: test/e2e (test/distributed runs after it, alone: jest.distributed.config.js). The kinds are defined in jest.config.js. */
const { projects, ...options } = require('./jest.config.js');

module.exports = { ...options, ...projects.find((project) => project.displayName === 'e2e') };
