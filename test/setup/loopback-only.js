// Tests talk to loopback only: any other destination fails loudly instead of leaving the machine.
const net = require('node:net');

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost|::ffff:127\.\d+\.\d+\.\d+)$/;
const originalConnect = net.Socket.prototype.connect;

net.Socket.prototype.connect = function connect(...args) {
  const options = typeof args[0] === 'object' && args[0] !== null ? args[0] : { port: args[0], host: args[1] };
  const host = options.host ?? 'localhost';
  if (!options.path && !LOOPBACK.test(host)) {
    throw new Error(`tests may only connect to loopback, not ${host}`);
  }
  return originalConnect.apply(this, args);
};
