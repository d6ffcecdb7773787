/**
 * Incremental recompiles serve what a cold compile would: a server's mesh state follows a random
 * series of registry events on a random mesh where some pods of a node claim one netns (what a
 * change tells the other services in that netns is the subtle part), and after each one every
 * node's served resources — names and versions of every type — equal a compile of the same
 * snapshot on a fresh index, whether the server was given the updated snapshot or the same mesh
 * parsed anew (which it takes as an update of what it serves), and whether or not the update
 * before was fully recompiled when it came (a server recompiling in slices). The events: health
 * flips, a pod gaining a port, moving to another node, renamed or going away, a service removed;
 * a node turning (not) ready, changing zone or address or leaving the list (read afresh or given
 * by `withNodes`); a service's dependencies, VIP, declared protocols or being exported changing.
 * What the recompile reuses (a node's last sorted lists patched in place, lists unchanged by
 * identity, a node's unchanged records, services whose netns rivals did not change) must never
 * serve a stale resource.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { compileNode } from "../../src/compile/compile-node.js";
import { toXdsResources, type XdsResources } from "../../src/emit/xds.js";
import { localNodeFrom } from "../../src/model/node.js";
import type { ServiceEndpoint } from "../../src/model/registry.js";
import { parseSnapshot, type Snapshot, withNodes, withServiceRecords } from "../../src/model/snapshot.js";
import { MeshState } from "../../src/server/mesh-state.js";
import { compilableNodes, everyModeSelection, type MeshDocument, meshDocumentArb, type NodeRef } from "../support/random-mesh.js";
import { assertProperty, runsFor, timeoutFor } from "./harness.js";

const MS_PER_RUN = 75;

/** One registry event: which record (by position over all records) and what happens to it. */
interface Event {
  readonly kind: RecordEventKind | DocumentEventKind;
  readonly record: number;
  readonly other: number;
}

/** What happens to a record: "remove" drops it from its service, "drop" removes its whole service. */
type RecordEventKind = "health" | "port" | "move" | "rename" | "remove" | "drop";
/**
 * Changes to the mesh document, read afresh (a node event sometimes given by `withNodes`): a
 * listed node turns (not) ready, moves to another zone or address, or leaves the node list; a
 * service calls one service more or less, or its dependencies are dropped; a service's VIP is
 * given, moved or dropped; a port's protocol is declared, changed or dropped; a service is
 * exported or not (or export data is given).
 */
type DocumentEventKind = "ready" | "zone" | "readdress" | "unlist" | "calls" | "vip" | "protocol" | "export";
const DOCUMENT_EVENTS: readonly string[] = ["ready", "zone", "readdress", "unlist", "calls", "vip", "protocol", "export"] satisfies DocumentEventKind[];
const NODE_EVENTS: readonly string[] = ["ready", "zone", "readdress", "unlist"] satisfies DocumentEventKind[];

const eventArb: fc.Arbitrary<Event> = fc.record({
  kind: fc.constantFrom<Event["kind"]>(
    ...(["health", "health", "port", "move", "rename", "remove", "drop"] as const),
    ...(["ready", "zone", "readdress", "unlist", "calls", "vip", "protocol", "export"] as const),
  ),
  record: fc.nat(),
  other: fc.nat(),
});

/**
 * The document after a document event, with `snapshot`'s records: what a source that reads the
 * whole registry again parses.
 */
function withDocumentEvent(doc: MeshDocument, snapshot: Snapshot, event: Event): MeshDocument {
  const next = asDocument(doc, snapshot);
  if (!NODE_EVENTS.includes(event.kind)) return withRelationEvent(next, event);
  const nodes = [...(next.nodes ?? [])] as { zone?: string; ready?: boolean; ip?: string }[];
  if (nodes.length === 0) return next;
  const at = event.record % nodes.length;
  const node = { ...nodes[at]! };
  if (event.kind === "ready") node.ready = !(node.ready ?? true);
  else if (event.kind === "zone") node.zone = node.zone === "z1" ? "z2" : "z1";
  // An address no other node has (the generator's are 10.1<c>.0.x); its records keep the old one.
  else if (event.kind === "readdress") node.ip = `10.250.${at}.${1 + (event.other % 250)}`;
  nodes.splice(at, 1, ...(event.kind === "unlist" ? [] : [node]));
  return { ...next, nodes } as MeshDocument;
}

/** `doc` with one service's dependencies, VIP, a port's protocol or its being exported changed. */
function withRelationEvent(doc: MeshDocument, event: Event): MeshDocument {
  const keys = Object.keys(doc.services ?? {}).sort();
  if (keys.length === 0) return doc;
  const at = event.record % keys.length;
  const key = keys[at]!;
  // A service known only from its protocols joins and leaves the index with them.
  if (event.kind === "protocol") return withProtocolEvent(doc, event.record % 3 === 0 ? "team-b/declared" : key, event.other);
  if (event.kind === "export") {
    if (!doc.exports) return event.other % 4 === 0 ? { ...doc, exports: keys } : doc;
    return { ...doc, exports: doc.exports.includes(key) ? doc.exports.filter((k) => k !== key) : [...doc.exports, key] };
  }
  if (event.kind === "vip") {
    const vips: Record<string, string> = { ...(doc.vips ?? {}) };
    const next = { undefined: `10.96.${at}.1`, [`10.96.${at}.1`]: `10.96.${at}.2` }[String(vips[key])];
    if (next) vips[key] = next;
    else delete vips[key];
    return { ...doc, vips };
  }
  const dependencies: Record<string, string[]> = { ...(doc.dependencies ?? {}) };
  const callee = keys[event.other % keys.length]!;
  const deps = dependencies[key] ?? [];
  if (event.other % 5 === 0) delete dependencies[key];
  else dependencies[key] = deps.includes(callee) ? deps.filter((dep) => dep !== callee) : [...deps, callee];
  return { ...doc, dependencies };
}

/**
 * `doc` with one of `key`'s declared protocols rotated, or port 9443's declared or dropped (with
 * the service's entry, when it was its last).
 */
function withProtocolEvent(doc: MeshDocument, key: string, other: number): MeshDocument {
  const protocols: Record<string, Record<string, string>> = { ...(doc.protocols ?? {}) };
  const ports: Record<string, string> = { ...(protocols[key] ?? {}) };
  const declared = Object.keys(ports);
  if (other % 2 === 0 && declared.length > 0) {
    const port = declared[other % declared.length]!;
    ports[port] = { http2: "http", http: "tcp", tcp: "http2" }[ports[port]!]!;
  } else if (ports["9443"]) delete ports["9443"];
  else ports["9443"] = "tcp";
  if (Object.keys(ports).length > 0) protocols[key] = ports;
  else delete protocols[key];
  return { ...doc, protocols } as MeshDocument;
}

/** The snapshot after `event`, as a registry watch builds it: only the touched service's records are new. */
function applied(snapshot: Snapshot, event: Event): Snapshot {
  const all = [...snapshot.services].flatMap(([key, records]) => records.map((record) => ({ key, record })));
  if (all.length === 0) return snapshot;
  const { key, record } = all[event.record % all.length]!;
  if (event.kind === "drop") return withServiceRecords(snapshot, new Map([[key, undefined]]));
  const records = snapshot.services.get(key)!;
  return withServiceRecords(
    snapshot,
    key,
    records.flatMap((r) => (r === record ? changed(r, event, all) : [r])),
  );
}

function changed(record: ServiceEndpoint, event: Event, all: readonly { record: ServiceEndpoint }[]): ServiceEndpoint[] {
  switch (event.kind) {
    case "health":
      return [{ ...record, health: record.health === "HEALTHY" ? "UNHEALTHY" : "HEALTHY" }];
    case "port":
      return [{ ...record, ports: [...record.ports, 9090 + (event.other % 3)] }];
    case "move": {
      const peers = all.filter(({ record: r }) => r.clusterName === record.clusterName && r.kubernetesMetadata.nodeName);
      if (peers.length === 0) return [record];
      const to = peers[event.other % peers.length]!.record.kubernetesMetadata;
      return [{ ...record, kubernetesMetadata: { ...record.kubernetesMetadata, nodeName: to.nodeName, nodeIp: to.nodeIp } }];
    }
    case "rename": {
      const { podName } = record.kubernetesMetadata;
      return [{ ...record, kubernetesMetadata: { ...record.kubernetesMetadata, podName: podName ? `${podName.slice(0, 60)}-r` : "renamed" } }];
    }
    case "remove":
      return [];
    default:
      throw new Error(`${event.kind} changes no single record`);
  }
}

function versions(resources: XdsResources): Record<string, string[]> {
  return Object.fromEntries(Object.entries(resources).map(([url, list]) => [url, list.map((r) => `${r.name}@${r.version}`)]));
}

/** A node's resources, or "refused" when the snapshot cannot compile it. */
function outcome(compile: () => XdsResources): Record<string, string[]> | "refused" {
  try {
    return versions(compile());
  } catch {
    return "refused";
  }
}

/** `doc` with `snapshot`'s records: what a source reading the whole registry again would parse. */
function asDocument(doc: MeshDocument, snapshot: Snapshot): MeshDocument {
  return {
    ...structuredClone(doc),
    services: Object.fromEntries([...snapshot.services].map(([key, records]) => [key, structuredClone([...records]) as Record<string, unknown>[]])),
  };
}

/** A compile on a fresh index: a new snapshot object shares nothing with the server's. */
function cold(snapshot: Snapshot, node: NodeRef, options: object): XdsResources {
  const copy = { ...snapshot };
  return toXdsResources(compileNode(copy, localNodeFrom(copy, node.cluster, node.name), options));
}

describe("incremental recompiles", () => {
  test(
    "after every registry event, every node's served resources equal a cold compile",
    () => {
      assertProperty(
        [meshDocumentArb({ withoutNetns: 2 }), fc.array(eventArb, { minLength: 1, maxLength: 4 }), fc.nat(), fc.nat({ max: 1 })],
        (first: MeshDocument, events: Event[], selection: number, reread: number) => {
          let doc = first;
          const selections = everyModeSelection();
          const options = selections[selection % selections.length]!;
          let snapshot = parseSnapshot(structuredClone(doc));
          const nodes = compilableNodes(snapshot);
          const state = new MeshState(snapshot, options);
          for (const node of nodes) outcome(() => state.resources(node.cluster, node.name).resources);
          for (const [i, event] of events.entries()) {
            if (DOCUMENT_EVENTS.includes(event.kind)) {
              doc = withDocumentEvent(doc, snapshot, event);
              // A node event reaches some servers as a node list update of the snapshot.
              const nodeList = NODE_EVENTS.includes(event.kind) && event.other % 2 === 1;
              snapshot = nodeList ? withNodes(snapshot, doc.nodes ?? []) : parseSnapshot(structuredClone(doc));
            } else snapshot = applied(snapshot, event);
            // Some events reach the server with the next one (a watch batch), so an update may
            // change several services.
            if (event.other % 3 === 0 && i < events.length - 1) continue;
            // Every other event as a source that reads everything afresh serves it: parsed anew,
            // which the server takes as an update of what it serves when anything but the mesh
            // settings differs.
            const given = i % 2 === reread ? parseSnapshot(asDocument(doc, snapshot)) : snapshot;
            // Some updates are still being recompiled (a server's slices) when the next comes: one
            // node recompiled, the others left stale for the next update to take over.
            if (event.other % 5 === 1 && i < events.length - 1) {
              state.accept(given);
              state.recompileStale(() => false);
              continue;
            }
            state.update(given);
            for (const node of nodes) {
              const served = outcome(() => state.resources(node.cluster, node.name).resources);
              expect(served, `after event ${i} (${event.kind}), node ${node.cluster}/${node.name}`).toEqual(outcome(() => cold(snapshot, node, options)));
            }
          }
        },
        runsFor(MS_PER_RUN),
      );
    },
    timeoutFor(MS_PER_RUN),
  );
});
