/** gRPC plumbing shared by the consensus and mirror servers: raw-bytes method definitions and binding. */
import * as grpc from '@grpc/grpc-js';
import { LocalNodeError } from './errors.js';

const identity = (b: Buffer): Buffer => b;

// grpc-js prints its own lines on stderr (a taken port: "E No address added out of total 1 resolved"); the
// emulator reports every failure itself, with what to do. GRPC_VERBOSITY still turns them on for debugging.
if (process.env.GRPC_VERBOSITY === undefined) grpc.setLogVerbosity(grpc.logVerbosity.NONE);

/** A method definition whose request and response are raw protobuf bytes (encoding stays with protobufjs). */
export function rawMethod(
  path: string,
  originalName: string,
  responseStream: boolean,
): grpc.MethodDefinition<Buffer, Buffer> {
  return {
    path,
    originalName,
    requestStream: false,
    responseStream,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  };
}

export function newServer(): grpc.Server {
  // Defaults are fine except the message size: mirror history pages and receipts are small, transactions ≤ 6 KiB.
  return new grpc.Server({ 'grpc.max_receive_message_length': 4 * 1024 * 1024 });
}

/** Binds plaintext h2c (the SDK uses TLS only on 50212/443) and resolves the actual port. */
export function bindServer(server: grpc.Server, host: string, port: number, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, bound) => {
      if (err) {
        const inUse = /EADDRINUSE|address already in use|No address added/i.test(err.message);
        reject(
          new LocalNodeError(
            inUse ? 'PORT_IN_USE' : 'BIND_FAILED',
            `${what} could not listen on ${host}:${port}: ${err.message}`,
            {
              hint: inUse
                ? `another local node (or an emulator in another test) holds port ${port}; stop it or choose other ports (0 = any free port)`
                : 'check the host and port options',
              cause: err,
            },
          ),
        );
        return;
      }
      resolve(bound);
    });
  });
}

/** Drops every open connection on the port (clients see UNAVAILABLE and reconnect); the listener stays. */
export function dropConnections(server: grpc.Server, host: string, port: number): void {
  server.drain(`${host}:${port}`, 0);
}

export function shutdown(server: grpc.Server): Promise<void> {
  return new Promise((resolve) => {
    // In-flight streams (TopicMessageQuery subscriptions) never end by themselves: no graceful wait.
    server.forceShutdown();
    setImmediate(resolve);
  });
}

export { grpc };
