// Tests talk to loopback only: any other destination fails loudly instead of leaving the machine.
const net = require('node:net');

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost|::ffff:127\.\d+\.\d+\.\d+)$/;
const originalConnect = net.Socket.prototype.connect;

net.Socket.prototype.connect = function connect(...args) {
  const options = typeof args[0] === 'object' && args[0] !== null ? args[0] : { port: args[0], host: args[1] };
  const host = options.host ?? 'localhost';
  if (!options.path && !LOOPBACK.test(host)) {
    // A name is let through only with a resolver of the test's own (the notifier's tests stand in for
    // DNS), and only to loopback addresses: what it resolves to is checked before the connection.
    if (typeof options.lookup !== 'function') throw new Error(`tests may only connect to loopback, not ${host}`);
    options.lookup = loopbackOnly(options.lookup);
  }
  return originalConnect.apply(this, args);
};

function loopbackOnly(lookup) {
  return (hostname, lookupOptions, callback) =>
    lookup(hostname, lookupOptions, (error, address, family) => {
      if (error) return callback(error, address, family);
      const addresses = Array.isArray(address) ? address.map((entry) => entry.address) : [address];
      const outside = addresses.find((candidate) => !LOOPBACK.test(candidate));
      if (outside !== undefined) return callback(new Error(`tests may only connect to loopback, not ${outside}`), address, family);
      return callback(null, address, family);
    });
}
