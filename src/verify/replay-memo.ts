/**
 * What many replayed paths derive from the same compiled resource or name (a pod's inbound chain
 * for an SNI, a socket's TLS context, what an entry chain shares upstream), kept for one replay in
 * tables by kind. One per replay: tests change compiled output between two checks of the same mesh.
 */
export class ReplayMemo {
  // Maps, not WeakMaps: the memo lives only as long as one replay, and weak keys cost the GC. A
  // table per kind keeps each small.
  readonly #tables = new Map<string, Map<unknown, unknown>>();

  /** The value for `key` in the table `kind`, built on first use. */
  get<K, V>(kind: string, key: K, build: () => V): V {
    let table = this.#tables.get(kind);
    if (!table) {
      table = new Map();
      this.#tables.set(kind, table);
    }
    if (table.has(key)) return table.get(key) as V;
    const value = build();
    table.set(key, value);
    return value;
  }
}
