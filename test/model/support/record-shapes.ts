/**
 * Run with `node --allow-natives-syntax --import tsx`: prints how many hidden classes the parsed
 * records of a generated mesh (and their nested objects), its local nodes and their pods have
 * among them, as JSON.
 */
import { generateDocument, SMOKE_WORKLOADS } from "../../../bench/workloads.js";
import { localNodeFrom } from "../../../src/model/node.js";
import { parseSnapshot } from "../../../src/model/snapshot.js";

const sameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;

function hiddenClasses(objects: readonly object[]): number {
  const representatives: object[] = [];
  for (const object of objects) if (!representatives.some((known) => sameMap(known, object))) representatives.push(object);
  return representatives.length;
}

const snapshot = parseSnapshot(generateDocument(SMOKE_WORKLOADS.W1));
const records = [...snapshot.services.values()].flat().slice(0, 500);
const nodes = snapshot.nodes.map((node) => localNodeFrom(snapshot, node.cluster, node.name));
console.log(
  JSON.stringify({
    records: records.length,
    record: hiddenClasses(records),
    kubernetesMetadata: hiddenClasses(records.map((r) => r.kubernetesMetadata)),
    containerMetadata: hiddenClasses(records.map((r) => r.containerMetadata)),
    locality: hiddenClasses(records.map((r) => r.locality)),
    nodes: nodes.length,
    node: hiddenClasses(nodes),
    pod: hiddenClasses(nodes.flatMap((n) => n.pods)),
  }),
);
