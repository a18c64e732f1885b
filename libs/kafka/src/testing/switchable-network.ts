import net from 'node:net';
import type { ISocketFactory } from 'kafkajs';

/**
 * A socket factory whose connections can be broken, to play broker outages for this client only:
 * the shared broker keeps serving everyone else. `cut` resets every connection and refuses new
 * ones (a broker that is down); `stall` stops delivering answers and leaves new connections
 * hanging (a broker that is unreachable or frozen); `restore` undoes both.
 */
export function switchableNetwork() {
  const open = new Set<net.Socket>();
  let state: 'up' | 'cut' | 'stalled' = 'up';
  const socketFactory: ISocketFactory = ({ host, port, onConnect }) => {
    if (state !== 'up') {
      const unreachable = new net.Socket();
      const refused = Object.assign(new Error(`connect ECONNREFUSED ${host}:${port} (simulated)`), { code: 'ECONNREFUSED' });
      if (state === 'cut') process.nextTick(() => unreachable.destroy(refused));
      return unreachable;
    }
    const socket = net.connect({ host, port }, onConnect);
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    return socket;
  };
  return {
    socketFactory,
    cut() {
      state = 'cut';
      const reset = Object.assign(new Error('read ECONNRESET (simulated)'), { code: 'ECONNRESET' });
      for (const socket of open) socket.destroy(reset);
    },
    stall() {
      state = 'stalled';
      for (const socket of open) socket.pause();
    },
    restore() {
      state = 'up';
      for (const socket of open) socket.resume();
    },
  };
}
