/**
 * What many replayed paths derive from the same compiled resource or name (a pod's inbound chain
 * for an SNI, a socket's TLS context, what an entry chain shares upstream), kept for one replay in
 * tables by kind. One per replay: tests change compiled output between two checks of the same mesh.
 */
export class ReplayMemo {
  // Maps, not WeakMaps: the memo lives only as long as one replay, and weak keys cost the GC. A
  // table per kind keeps each small.
  readonly #tables = new Map<string, Map<unknown, unknown>>();

  /**
   * The value for `key` in the table `kind`, built by `build(key, arg)` on first use. `build` is
   * best a function declared once, not a closure: the replay asks millions of times.
   */
  get<K, V, A = undefined>(kind: string, key: K, build: (key: K, arg: A) => V, arg?: A): V {
    let table = this.#tables.get(kind);
    if (!table) {
      table = new Map();
      this.#tables.set(kind, table);
    }
    const known = table.get(key);
    if (known !== undefined || table.has(key)) return known as V;
    const value = build(key, arg as A);
    table.set(key, value);
    return value;
  }

  /** Removes the value for `key` from the table `kind`, returning it (undefined when there was none). */
  take(kind: string, key: unknown): unknown {
    const table = this.#tables.get(kind);
    const value = table?.get(key);
    table?.delete(key);
    return value;
  }
}
