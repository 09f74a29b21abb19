/** The standard local-node ports (hiero-local-node's and the embedded emulator's), so `--network local` finds either. */
export const LOCAL_PORTS = { consensus: 50211, mirrorGrpc: 5600, mirrorRest: 5551 } as const;
export type LocalPorts = { consensus: number; mirrorGrpc: number; mirrorRest: number };
