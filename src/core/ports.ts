/** The standard local-node ports (hiero-local-node's and the embedded emulator's), so `--network local` finds either. */
export const LOCAL_PORTS = { consensus: 50211, mirrorGrpc: 5600, mirrorRest: 5551 } as const;
export type LocalPorts = { consensus: number; mirrorGrpc: number; mirrorRest: number };
/**
 * A multi-node local network puts node 0.0.(3+i) on the first port + 1000·i (50211, 51211, …), as hiero-local-node's
 * multi-node mode does. Not + 1: the SDK speaks TLS to any node on port 50212.
 */
export const LOCAL_NODE_PORT_STEP = 1000;
