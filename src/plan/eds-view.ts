/**
 * What EDS depends on: the viewer's cluster and locality, the waypoint mode and ports — and the
 * viewer's node only in `always` mode. Nodes with the same view share their assignments.
 */
import type { LocalNode } from "../model/node.js";
import type { Options, SocketSelection, WaypointMode } from "../model/options.js";
import { compositeKey } from "../util/keys.js";

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

/**
 * The view as one service's EDS depends on it. The viewer's node matters only in `always` mode and
 * only for a service with a pod on that node (the one endpoint kept direct), so every other node
 * of the cluster and zone shares the assignment.
 */
export function serviceViewKey(view: EdsView, service: { readonly nodes: ReadonlySet<string> }): string {
  const keys = viewKeys(view);
  return keys.node && service.nodes.has(keys.node) ? keys.withNode : keys.withoutNode;
}

/** The view's own key (its node included): views with equal keys see every service alike. */
export function viewKey(view: EdsView): string {
  return viewKeys(view).withNode;
}

/** The two keys a view can have, built once per view object. */
const keysByView = new WeakMap<EdsView, { readonly node: string; readonly withNode: string; readonly withoutNode: string }>();

function viewKeys(view: EdsView) {
  let keys = keysByView.get(view);
  if (!keys) {
    const key = (node: string) =>
      compositeKey("eds", view.cluster, view.region, view.zone, node, view.mode, view.socketSelection, view.inboundPort, view.tunnelPort);
    keys = { node: view.node && `${view.cluster}/${view.node}`, withNode: key(view.node), withoutNode: key("") };
    keysByView.set(view, keys);
  }
  return keys;
}
