/**
 * What EDS depends on: the viewer's cluster and locality, the waypoint mode and ports — and the
 * viewer's node only in `always` mode. Nodes with the same view share their assignments.
 */
import type { LocalNode } from "../model/node.js";
import type { Options, SocketSelection, WaypointMode } from "../model/options.js";

export interface EdsView {
  readonly cluster: string;
  readonly region: string;
  readonly zone: string;
  /** The viewer's node name in `always` mode, where same-node endpoints stay direct; else "". */
  readonly node: string;
  readonly mode: WaypointMode;
  readonly socketSelection: SocketSelection;
  readonly inboundPort: number;
  readonly tunnelPort: number;
}

export function edsView(node: LocalNode, options: Options): EdsView {
  return {
    cluster: node.clusterName,
    region: node.locality.region,
    zone: node.locality.zone,
    node: options.eastWestWaypoint === "always" ? node.nodeName : "",
    mode: options.eastWestWaypoint,
    socketSelection: options.socketSelection,
    inboundPort: options.inboundPort,
    tunnelPort: options.tunnelPort,
  };
}

export function viewKey(view: EdsView): string {
  return [view.cluster, view.region, view.zone, view.node, view.mode, view.socketSelection, view.inboundPort, view.tunnelPort].join("\u0000");
}
