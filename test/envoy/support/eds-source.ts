/**
 * Where a mesh lab's Envoys get their endpoints (EDS) from — the one part of the lab that changes
 * when the ADS server (issue 12) serves it. Until then, two sources, both TEMPORARY:
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
import type { Snapshot } from "../../../src/model/snapshot.js";
import { inlineAssignments, type RenderedBootstrap, withoutUnusedAds } from "./bootstrap-transforms.js";

type Json = any;

export type EdsSourceKind = "inline" | "files";

export interface EdsSource {
  readonly kind: EdsSourceKind;
  /** `rendered` (a node's compiled bootstrap) wired to this source, serving `assignments`. A copy. */
  wire(node: string, rendered: RenderedBootstrap, assignments: readonly Json[]): RenderedBootstrap;
  /** Serves a registry change — the new snapshot and each Envoy node's compile of it — to the running Envoys; `inline` cannot. */
  update(snapshot: Snapshot, compiled: ReadonlyMap<string, CompileResult>): void;
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
      throw new Error("inline EDS cannot change at run time: start the lab with eds: 'files'");
    },
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
  };
}

export function edsSource(kind: EdsSourceKind, dir: string): EdsSource {
  return kind === "files" ? fileEds(dir) : inlineEds();
}
