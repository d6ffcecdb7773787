/**
 * etcd as a registry source (npm `etcd3`): one read of everything under the prefix, then a watch
 * from the revision after it. Each watch response — whole revisions, so a transaction's keys
 * arrive together — becomes one snapshot: never half of an update. Endpoint changes re-validate
 * only the services they touch, in one update (`withValidServiceRecords`, so the index
 * stays incremental), and node status changes only the node list (`withNodes`); a settings write
 * validates the settings with the records served (`settingsUpdate`), and parses everything again
 * only when the mesh settings themselves changed. After a disconnect the client resumes the watch
 * from the last revision it saw; when that revision has been compacted away (the watch is
 * cancelled), the source reads everything afresh and watches from there. What is parsed again is
 * pushed as an update of the last snapshot when only records, node statuses, dependencies, VIPs,
 * protocols and exports changed (`asRegistryUpdate`), and not at all when nothing did.
 *
 * A record that disagrees with its key or does not decode is left out and reported; a service
 * whose records do not validate keeps its last good records, and a node list that does not
 * validate its last good statuses (reported); the rest of the update is served, a re-read after a
 * compaction included. A service whose last record is deleted is removed, as a fresh read would
 * not find it.
 */
import { Etcd3, type IKeyValue, type Watcher } from "etcd3";
import { type InputError, isInputError } from "../errors.js";
import { asRegistryUpdate, settingsUpdate } from "../model/registry-update.js";
import { parseSnapshot, type Snapshot, withNodes, withValidServiceRecords } from "../model/snapshot.js";
import type { ServiceKey } from "../naming.js";
import { getOrInsert } from "../util/maps.js";
import { DEFAULT_ETCD_PREFIX, parseRegistryKey, type RegistryKey, recordKeyMismatch } from "./etcd-keys.js";
import { Channel, describeError, type RegistrySource, type SourceUpdate } from "./source.js";

/** Where the etcd registry is. */
export interface EtcdSourceOptions {
  /** etcd endpoints, e.g. `["http://127.0.0.1:2379"]`. */
  readonly endpoints: readonly string[];
  /** The registry's key prefix (default `/aether/v1`), without a trailing `/`. */
  readonly prefix?: string;
}

/** The registry as read from etcd: the latest value of every key, by kind. */
interface RegistryState {
  mesh: unknown;
  readonly nodes: Map<string, { readonly key: Extract<RegistryKey, { kind: "node" }>; readonly value: Buffer }>;
  readonly services: Map<ServiceKey, Map<string, Buffer>>;
}

/** The registry in etcd (layout: `etcd-keys.ts`, README "Registry sources"), as snapshots. */
export class EtcdSource implements RegistrySource {
  readonly prefix: string;
  readonly #client: Etcd3;
  readonly #channel = new Channel<SourceUpdate>();
  #state: RegistryState = emptyState();
  #snapshot: Snapshot | undefined;
  #watcher: Watcher | undefined;
  #started = false;
  #closed = false;

  constructor(options: EtcdSourceOptions) {
    this.prefix = (options.prefix ?? DEFAULT_ETCD_PREFIX).replace(/\/+$/, "");
    this.#client = new Etcd3({ hosts: [...options.endpoints] });
  }

  watch(): AsyncIterable<SourceUpdate> {
    if (!this.#started) {
      this.#started = true;
      void this.#resync();
    }
    return this.#channel;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#watcher?.cancel();
    this.#client.close();
    this.#channel.end();
  }

  /** Reads everything under the prefix, serves it, and watches from the next revision. */
  async #resync(): Promise<void> {
    if (this.#closed) return;
    await this.#watcher?.cancel();
    this.#watcher = undefined;
    let revision: string;
    try {
      const response = await this.#client.getAll().prefix(`${this.prefix}/`).exec();
      revision = String(response.header.revision);
      this.#state = emptyState();
      const problems = response.kvs.flatMap((kv) => this.#apply(kv.key.toString(), kv.value));
      this.#publish(undefined, problems);
    } catch (error) {
      if (this.#closed) return;
      this.#channel.push({ error: `etcd ${this.prefix}: ${describeError(error)}` });
      setTimeout(() => void this.#resync(), 1000);
      return;
    }
    const watcher = await this.#client
      .watch()
      .prefix(`${this.prefix}/`)
      .startRevision(String(BigInt(revision) + 1n))
      .create();
    if (this.#closed) return void watcher.cancel();
    this.#watcher = watcher;
    watcher.on("data", (response) => this.#onEvents(response.events));
    // A cancelled watch — its start revision compacted away — cannot resume: read afresh. The
    // client has already dropped it, so it is not cancelled again.
    watcher.on("error", () => {
      if (this.#watcher !== watcher) return;
      this.#watcher = undefined;
      void this.#resync();
    });
  }

  #onEvents(events: readonly { type: string; kv: IKeyValue }[]): void {
    const touched = new Set<ServiceKey>();
    let nodes = false;
    let settings = false;
    const problems: string[] = [];
    for (const { type, kv } of events) {
      const key = kv.key.toString();
      const parsed = parseRegistryKey(this.prefix, key);
      if (parsed?.kind === "endpoint") touched.add(parsed.service);
      else if (parsed?.kind === "node") nodes = true;
      else if (parsed?.kind === "mesh") settings = true;
      problems.push(...this.#apply(key, type === "Delete" ? undefined : kv.value));
    }
    this.#publish({ services: [...touched].sort(), nodes, settings }, problems);
  }

  /** Records one key's value (undefined: deleted) in the state; returns its problems. */
  #apply(key: string, value: Buffer | undefined): string[] {
    const parsed = parseRegistryKey(this.prefix, key);
    if (!parsed) return [`${key}: not a key of the registry layout (ignored)`];
    if (parsed.kind === "mesh") {
      if (value === undefined) this.#state.mesh = undefined;
      else {
        try {
          this.#state.mesh = JSON.parse(value.toString("utf8"));
        } catch (error) {
          this.#state.mesh = undefined;
          return [`${key}: not JSON: ${describeError(error)}`];
        }
      }
      return [];
    }
    if (parsed.kind === "node") {
      if (value === undefined) this.#state.nodes.delete(key);
      else this.#state.nodes.set(key, { key: parsed, value });
      return [];
    }
    const records = getOrInsert(this.#state.services, parsed.service, () => new Map<string, Buffer>());
    records.delete(key);
    const mismatch = value && recordKeyMismatch(parsed, value);
    if (value && !mismatch) records.set(key, value);
    // A service is its records: with none left it is gone, as a fresh read would not find it.
    if (records.size === 0) this.#state.services.delete(parsed.service);
    return mismatch ? [`${key}: ${mismatch} (left out)`] : [];
  }

  /** Serves the state: what changed on top of the last snapshot, or (undefined) everything afresh. */
  #publish(changes: Touched | undefined, problems: string[]): void {
    const snapshot = this.#snapshot;
    const settled = changes && snapshot && this.#settled(snapshot, changes, problems);
    let next: Snapshot | undefined;
    if (changes && settled) next = this.#withTouched(settled, changes.services, problems);
    else {
      try {
        const parsed = parseSnapshot(document(this.#state));
        next = snapshot ? asRegistryUpdate(snapshot, parsed) : parsed;
      } catch (error) {
        if (snapshot && !changes && isInputError(error)) next = this.#rereadPiecewise(snapshot, problems);
        else problems.push(`${this.prefix}: ${describeError(error)}`);
      }
    }
    if (problems.length > 0) this.#channel.push({ error: problems.join("\n") });
    if (next && next !== this.#snapshot) {
      this.#snapshot = next;
      this.#channel.push({ snapshot: next });
    }
  }

  /**
   * `snapshot` with the state's settings and node list when the settings changed (`settingsUpdate`:
   * the records are not parsed again), else with its node list (`#withNodeList`). Undefined when
   * the settings must be parsed with everything (the mesh settings changed, or they do not
   * validate so: the whole parse then reports them as it always has).
   */
  #settled(snapshot: Snapshot, changes: Touched, problems: string[]): Snapshot | undefined {
    if (!changes.settings) return this.#withNodeList(snapshot, changes.nodes, problems);
    const updated = updatedSettings(snapshot, this.#state);
    return isInputError(updated) ? undefined : updated;
  }

  /**
   * Everything read afresh (after a compaction) that does not validate as a whole, applied on top
   * of `snapshot` part by part, as watch events are: the settings and node list if they validate
   * with the records served, then every service, each refused one keeping its last good records
   * (reported). Else one refused record would hold back every change made while the watch was down.
   */
  #rereadPiecewise(snapshot: Snapshot, problems: string[]): Snapshot {
    const updated = updatedSettings(snapshot, this.#state);
    let settled: Snapshot;
    if (updated && !isInputError(updated)) settled = updated;
    else {
      const why = updated ? describeError(updated) : "the mesh settings change only with a registry that validates as a whole";
      problems.push(`${this.prefix} settings keep their last good values: ${why}`);
      settled = this.#withNodeList(snapshot, true, problems);
    }
    const services = [...new Set([...snapshot.services.keys(), ...this.#state.services.keys()])].sort();
    return this.#withTouched(settled, services, problems);
  }

  /** The state's node list on top of `snapshot` when a node changed (`withNodes`); refused, `snapshot` itself. */
  #withNodeList(snapshot: Snapshot, changed: boolean, problems: string[]): Snapshot {
    if (!changed) return snapshot;
    try {
      return withNodes(snapshot, nodeList(this.#state));
    } catch (error) {
      problems.push(`${this.prefix} nodes keep their last good statuses: ${describeError(error)}`);
      return snapshot;
    }
  }

  /**
   * The touched services' records on top of `snapshot`, in one update (the services map copied
   * once, however many services a batch touches), each refused service keeping its last good
   * records (`withValidServiceRecords`).
   */
  #withTouched(snapshot: Snapshot, services: readonly ServiceKey[], problems: string[]): Snapshot {
    if (services.length === 0) return snapshot;
    const update = withValidServiceRecords(snapshot, new Map(services.map((service) => [service, serviceRecords(this.#state, service)])));
    for (const service of services) {
      const refused = update.refused.get(service);
      if (refused) problems.push(`${this.prefix} service ${service} keeps its last good records: ${describeError(refused)}`);
    }
    return update.snapshot;
  }
}

/** What a watch response changed: these services' records, whether any node's status, whether the settings. */
interface Touched {
  readonly services: readonly ServiceKey[];
  readonly nodes: boolean;
  readonly settings: boolean;
}

function emptyState(): RegistryState {
  return { mesh: undefined, nodes: new Map(), services: new Map() };
}

/**
 * A service's records, in key order (the compiler is order-independent; this keeps errors
 * stable); undefined when it has none (gone: `withServiceRecords` removes it).
 */
function serviceRecords(state: RegistryState, service: ServiceKey): Buffer[] | undefined {
  const records = state.services.get(service);
  return records && [...records].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, value]) => value);
}

/** The state as a mesh-file document, for `parseSnapshot`. */
function document(state: RegistryState): unknown {
  const services = Object.fromEntries([...state.services.keys()].sort().map((service) => [service, serviceRecords(state, service)]));
  return { ...settingsDocument(state), services };
}

/** `settingsUpdate` with the state's settings and node list; an input error is returned, not thrown. */
function updatedSettings(snapshot: Snapshot, state: RegistryState): Snapshot | InputError | undefined {
  try {
    return settingsUpdate(snapshot, settingsDocument(state));
  } catch (error) {
    if (isInputError(error)) return error;
    throw error;
  }
}

/** The state's settings and node list: a mesh-file document without its services. */
function settingsDocument(state: RegistryState): Record<string, unknown> {
  const settings = typeof state.mesh === "object" && state.mesh !== null ? state.mesh : {};
  return { ...settings, nodes: nodeList(state) };
}

/** The state's node statuses as a mesh file's `nodes`, in key order. */
function nodeList(state: RegistryState): unknown[] {
  return [...state.nodes].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, { key, value }]) => nodeEntry(key, value));
}

function nodeEntry(key: Extract<RegistryKey, { kind: "node" }>, value: Buffer): unknown {
  let status: unknown;
  try {
    status = JSON.parse(value.toString("utf8"));
  } catch {
    status = value.toString("utf8"); // parseSnapshot reports it at nodes[i]
  }
  const fields = typeof status === "object" && status !== null ? status : { status };
  return { ...fields, cluster: key.cluster, name: key.node, region: key.region };
}
