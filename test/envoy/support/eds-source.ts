/**
 * Where a mesh lab's Envoys get their endpoints (EDS) from:
 *
 * - `ads`: aether-xds's ADS server (`aether-xds/server`), as in production (see `adsEds`).
 *
 * and two TEMPORARY ones, until every suite is served by the server:
 *
 * - `inline`: every EDS cluster becomes STATIC with its assignment inline (`inlineAssignments`).
 *   Fixed for the Envoy's life.
 * - `files`: every EDS cluster keeps `type: EDS` and reads its assignment from a file
 *   (`ConfigSource.path_config_source`), one `DiscoveryResponse` per cluster. `update` writes new
 *   assignments to a temporary file and renames it over the old one: Envoy watches the file's
 *   directory for that rename and applies the new assignment at run time, as it would an EDS push.
 *
 * Each source takes the rendered bootstrap as compiled (EDS over ADS) and returns the one the lab
 * runs; nothing but the EDS config source changes.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CompileResult } from "../../../src/compile/compile-node.js";
import { renderMessage } from "../../../src/emit/render.js";
import { XDS_TYPE_URLS } from "../../../src/emit/xds.js";
import type { OptionsInput } from "../../../src/model/options.js";
import type { Snapshot } from "../../../src/model/snapshot.js";
import { AdsServer } from "../../../src/server/ads-server.js";
import { inlineAssignments, pointClusterAt, type RenderedBootstrap, withoutUnusedAds } from "./bootstrap-transforms.js";

type Json = any;

export type EdsSourceKind = "inline" | "files" | "ads";

export interface EdsSource {
  readonly kind: EdsSourceKind;
  /** `rendered` (a node's compiled bootstrap) wired to this source, serving `assignments`. A copy. */
  wire(node: string, rendered: RenderedBootstrap, assignments: readonly Json[]): RenderedBootstrap;
  /** Serves a registry change — the new snapshot and each Envoy node's compile of it — to the running Envoys; `inline` cannot. */
  update(snapshot: Snapshot, compiled: ReadonlyMap<string, CompileResult>): void;
  /** Resolves once `node`'s Envoy holds the last update (`ads`: ACKed); immediately where the source cannot tell. */
  applied(node: string): Promise<void>;
  stop(): Promise<void>;
}

/** A compile's endpoints as Envoy JSON (rendered ClusterLoadAssignments). */
export function renderedAssignments(result: CompileResult): Json[] {
  return result.endpoints.map((e) => renderMessage("envoy.config.endpoint.v3.ClusterLoadAssignment", e));
}

const CLA_TYPE = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

export function inlineEds(): EdsSource {
  return {
    kind: "inline",
    wire: (_node, rendered, assignments) => inlineAssignments(rendered, assignments),
    update() {
      throw new Error("inline EDS cannot change at run time: start the lab with eds: 'files' or 'ads'");
    },
    applied: async () => {},
    stop: async () => {},
  };
}

/** File-based EDS under `dir`: one directory per node, one file per EDS service name. */
export function fileEds(dir: string): EdsSource {
  let version = 0;
  const fileOf = (node: string, serviceName: string) => join(dir, node.replace(/[^A-Za-z0-9._-]+/g, "_"), `${encodeURIComponent(serviceName)}.json`);
  const write = (node: string, assignments: readonly Json[]) => {
    version++;
    for (const assignment of assignments) {
      const file = fileOf(node, assignment.cluster_name);
      mkdirSync(join(file, ".."), { recursive: true });
      const body = { version_info: String(version), resources: [{ "@type": CLA_TYPE, ...assignment }] };
      // Envoy reacts to a file moved into place, never to one written in place (it could read half of it).
      writeFileSync(`${file}.tmp`, JSON.stringify(body));
      renameSync(`${file}.tmp`, file);
    }
  };
  return {
    kind: "files",
    wire(node, rendered, assignments) {
      write(node, assignments);
      const copy = structuredClone(rendered) as Json;
      const served = new Set(assignments.map((a) => a.cluster_name));
      for (const cluster of copy.static_resources.clusters) {
        if (cluster.type !== "EDS") continue;
        const serviceName = cluster.eds_cluster_config?.service_name ?? cluster.name;
        if (!served.has(serviceName)) throw new Error(`no ClusterLoadAssignment for EDS cluster ${cluster.name}`);
        cluster.eds_cluster_config = {
          service_name: serviceName,
          eds_config: { path_config_source: { path: fileOf(node, serviceName) }, resource_api_version: "V3" },
        };
      }
      return withoutUnusedAds(copy);
    },
    update(_snapshot, compiled) {
      for (const [node, result] of compiled) write(node, renderedAssignments(result));
    },
    applied: async () => {},
    stop: async () => {},
  };
}

/**
 * aether-xds's own ADS server (`aether-xds/server`) on a Unix socket under `dir`, compiling with
 * `compile` (the lab's options): each bootstrap keeps `eds: ads` and its `xds_cluster` points at
 * the server; `update` hands the server the new snapshot, which pushes to the nodes whose
 * endpoints changed.
 */
export async function adsEds(dir: string, snapshot: Snapshot, compile: OptionsInput): Promise<EdsSource> {
  mkdirSync(dir, { recursive: true });
  const socketPath = join(dir, "ads.sock");
  const server = new AdsServer({ snapshot, compile });
  await server.listen(`unix:${socketPath}`);
  return {
    kind: "ads",
    wire: (_node, rendered) => pointClusterAt(rendered, "xds_cluster", { pipe: { path: socketPath } }),
    update(next) {
      server.setSnapshot(next);
    },
    applied: (node) => server.acked(node, XDS_TYPE_URLS.endpoints),
    stop: () => server.close(),
  };
}

export async function edsSource(kind: EdsSourceKind, dir: string, snapshot: Snapshot, compile: OptionsInput): Promise<EdsSource> {
  if (kind === "ads") return adsEds(dir, snapshot, compile);
  return kind === "files" ? fileEds(dir) : inlineEds();
}
