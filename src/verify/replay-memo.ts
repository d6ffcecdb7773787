/**
 * What many replayed paths derive from the same compiled resource or name (a pod's inbound chain
 * for an SNI, a socket's TLS context, what an entry chain shares upstream), kept for one replay in
 * tables by kind. One per replay: tests change compiled output between two checks of the same mesh.
 */
/**
 * Every table's kind, named once here: a kind spelled differently at one call site, or renamed at
 * one and not in a list of kinds (the node-by-node check keeps some across nodes), does not compile.
 */
export type MemoKind =
  | "address"
  | "aggregate"
  | "aggregate levels"
  | "arrivals"
  | "catch-all route"
  | "client TLS"
  | "forwarded"
  | "levels by node"
  | "mTLS hops"
  | "node proxy entry"
  | "plain levels"
  | "reads filter state"
  | "shared trust domain"
  | "socket choice"
  | "source class ids"
  | "source facts"
  | "stamped"
  | "target ids"
  | "target names"
  | "trust domain"
  | "trusted domains"
  | "virtual hosts";

export class ReplayMemo {
  // Maps, not WeakMaps: the memo lives only as long as one replay, and weak keys cost the GC. A
  // table per kind keeps each small.
  readonly #tables = new Map<MemoKind, Map<unknown, unknown>>();
  /** What only the current target's paths read (`forTarget`), dropped by `endTarget`. */
  readonly #targetTables = new Map<MemoKind, Map<unknown, unknown>>();

  /**
   * The value for `key` in the table `kind`, built by `build(key, arg)` on first use and kept for
   * the whole replay. `build` is best a function declared once, not a closure: the replay asks
   * millions of times.
   */
  get<K, V, A = undefined>(kind: MemoKind, key: K, build: (key: K, arg: A) => V, arg?: A): V {
    return lookup(this.#tables, kind, key, build, arg as A);
  }

  /**
   * As `get`, kept only until `endTarget`: for what the paths to one service port derive from its
   * clusters (their levels, dials, sockets, the pods they land on), which other targets' paths do
   * not read. A replay that takes the paths target by target (the mesh check) then holds one
   * target's worth of it at a time, and most of it dies young.
   */
  forTarget<K, V, A = undefined>(kind: MemoKind, key: K, build: (key: K, arg: A) => V, arg?: A): V {
    return lookup(this.#targetTables, kind, key, build, arg as A);
  }

  /** Drops what `forTarget` kept: the paths replayed after this build it again. */
  endTarget(): void {
    this.#targetTables.clear();
  }

  /**
   * Drops every table, of either scope, but those of the kinds `kept`: for a replay that takes the
   * paths node by node, which keeps what arrivals at other nodes derive (their sides stay) and
   * drops whatever may hold the node's own output.
   */
  endNode(kept: ReadonlySet<MemoKind>): void {
    for (const tables of [this.#tables, this.#targetTables]) {
      for (const kind of tables.keys()) if (!kept.has(kind)) tables.delete(kind);
    }
  }
}

function lookup<K, V, A>(tables: Map<MemoKind, Map<unknown, unknown>>, kind: MemoKind, key: K, build: (key: K, arg: A) => V, arg: A): V {
  let table = tables.get(kind);
  if (!table) {
    table = new Map();
    tables.set(kind, table);
  }
  const known = table.get(key);
  if (known !== undefined || table.has(key)) return known as V;
  const value = build(key, arg);
  table.set(key, value);
  return value;
}
