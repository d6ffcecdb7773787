/** Which mesh node an Envoy is: the rule that maps its bootstrap `node` to (cluster, node). */

/** What the rule sees of Envoy's `node` (bootstrap `node.id` and `node.cluster`). */
export interface EnvoyNode {
  readonly id: string;
  readonly cluster: string;
}

/** A mesh node: its cluster and its name in that cluster. */
export interface MeshNodeRef {
  readonly cluster: string;
  readonly node: string;
}

/**
 * Maps an Envoy's node to the mesh node it proxies for, or undefined when the id does not name
 * one (the stream is then refused with INVALID_ARGUMENT).
 */
export type NodeIdRule = (node: EnvoyNode) => MeshNodeRef | undefined;

/**
 * The default rule: `node.id` is `<cluster>/<node>`, as `toBootstrap` and `aether-xds bootstrap`
 * write it. Both parts must be non-empty; the node name may not contain another `/`.
 */
export const defaultNodeIdRule: NodeIdRule = ({ id }) => {
  const slash = id.indexOf("/");
  if (slash <= 0 || slash === id.length - 1 || id.indexOf("/", slash + 1) >= 0) return undefined;
  return { cluster: id.slice(0, slash), node: id.slice(slash + 1) };
};
