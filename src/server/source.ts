/**
 * Where the server's snapshots come from: one small interface, implemented by the mesh-file
 * watcher and the etcd source. A source yields a snapshot whenever the registry changed — every
 * snapshot complete, never half of an update — or an error (the path-qualified problems), after
 * which the server keeps serving the last good snapshot.
 */
import type { Snapshot } from "../model/snapshot.js";

/** What a source yields: a complete snapshot, or the problems of an update it could not use. */
export type SourceUpdate = { readonly snapshot: Snapshot } | { readonly error: string };

/** Where snapshots come from (`AdsServer.follow`): a mesh file, etcd, or your own registry. */
export interface RegistrySource {
  /** The current snapshot first (or an error), then one update per change, until `close`. */
  watch(): AsyncIterable<SourceUpdate>;
  /** Stops watching: the iteration ends. */
  close(): Promise<void>;
}

/** A push-driven async iterable: the producer pushes, one consumer iterates; `end` finishes it. */
export class Channel<T> implements AsyncIterable<T> {
  readonly #queue: T[] = [];
  #wake: (() => void) | undefined;
  #ended = false;

  push(value: T): void {
    if (this.#ended) return;
    this.#queue.push(value);
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const next = this.#queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
  }
}

/** An error as one line per problem, each with its path. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
