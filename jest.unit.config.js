/** `npm run test:unit`: tests that need no servers and start no processes. The kinds are defined in jest.config.js. */
const { projects, ...options } = require('./jest.config.js');

module.exports = { ...options, ...projects.find((project) => project.displayName === 'unit') };
