/**
 * A TCP proxy in front of DynamoDB Local that a test controls: it passes traffic through, drops
 * every connection, or accepts connections and never answers, so the database can "go down",
 * "hang" and "come back" mid-test.
 */
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

export type FaultMode = 'pass' | 'drop' | 'hang';

export interface FaultProxy {
  readonly endpoint: string;
  setMode(mode: FaultMode): void;
  close(): Promise<void>;
}

export const startFaultProxy = async (target: string): Promise<FaultProxy> => {
  const { hostname, port } = new URL(target);
  let mode: FaultMode = 'pass';
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = createServer((client) => {
    track(client);
    if (mode === 'drop') return void client.destroy();
    if (mode === 'hang') return void client.resume(); // read the request, never answer
    const upstream = connect(Number(port), hostname);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    setMode: (next) => {
      mode = next;
      // Open keep-alive connections would otherwise carry on as if nothing happened.
      if (next !== 'pass') for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
};
