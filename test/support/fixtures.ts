/** Test fixtures: the bundled example mesh, as a document to mutate or as a parsed snapshot. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { parseSnapshot, type Snapshot } from "../../src/model/snapshot.js";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const EXAMPLE_MESH = `${REPO_ROOT}testdata/flannel/mesh.yaml`;

/** A fresh copy of a mesh file's document, safe to mutate. */
export function meshDocument(path = EXAMPLE_MESH): any {
  return parseYaml(readFileSync(path, "utf8"));
}

export function exampleSnapshot(): Snapshot {
  return parseSnapshot(meshDocument());
}

/** A registry record of a service the example mesh does not have (`team-c/ledger`), on east/node-3. */
export function ledgerRecord() {
  return {
    ip: "10.244.2.30",
    clusterName: "east",
    port: 7000,
    locality: { region: "eu-west-1", zone: "eu-west-1b" },
    containerMetadata: { networkNamespace: "/var/run/netns/cni-ledger" },
    kubernetesMetadata: { podName: "ledger-1", nodeName: "node-3", nodeIp: "10.10.0.13" },
  };
}
