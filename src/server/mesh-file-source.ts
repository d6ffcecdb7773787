/**
 * A mesh file (JSON or YAML) as a registry source: read now and again whenever it changes on
 * disk (written in place or replaced by a rename, as editors and `kubectl cp` do). A file that
 * does not parse or validate yields its path-qualified errors and the server keeps serving the
 * last good snapshot; the same bytes read twice yield nothing, and so does a file whose contents
 * did not change (a comment, another key order). A file in which anything but the mesh settings
 * changed (records, node statuses, dependencies, VIPs, protocols, exports) is pushed as an update
 * of the last snapshot (`asRegistryUpdate`): the server re-indexes the services that touches and
 * recompiles only the nodes they reach. In a JSON file, only the services whose records changed
 * are parsed and validated again, with the other parts that changed (`rereadMeshFileText`); a
 * change to the mesh settings themselves is parsed whole.
 */
import { type FSWatcher, readFileSync, watch } from "node:fs";
import { basename, dirname } from "node:path";
import { meshFileFormat } from "../model/mesh-file.js";
import { type MeshFileRead, rereadMeshFileText } from "../model/mesh-file-reread.js";
import { Channel, describeError, type RegistrySource, type SourceUpdate } from "./source.js";

/** How long a burst of file events settles before the file is read (an editor writes in steps). */
const SETTLE_MS = 50;

/** A mesh file as snapshots: the file now, and again after every change on disk. */
export class MeshFileSource implements RegistrySource {
  readonly #channel = new Channel<SourceUpdate>();
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  /**
   * The text last read, to skip a read that says the same (kept anyway by a JSON file's read,
   * whose parts are slices of it; comparing costs less than hashing it).
   */
  #lastText: string | undefined;
  /** The last good read: a file that changed only records is pushed as an update of its snapshot. */
  #last: MeshFileRead | undefined;

  constructor(readonly path: string) {}

  watch(): AsyncIterable<SourceUpdate> {
    if (!this.#watcher) {
      // The directory, not the file: a rename over the file would end a watch on the file itself.
      const name = basename(this.path);
      this.#watcher = watch(dirname(this.path), (_event, changed) => {
        if (changed !== null && changed !== name) return;
        clearTimeout(this.#timer);
        this.#timer = setTimeout(() => this.#read(), SETTLE_MS);
      });
      this.#read();
    }
    return this.#channel;
  }

  async close(): Promise<void> {
    clearTimeout(this.#timer);
    this.#watcher?.close();
    this.#channel.end();
  }

  #read(): void {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (error) {
      // Between an unlink and a rename the file may be briefly missing: the next event reads it.
      if ((error as NodeJS.ErrnoException).code === "ENOENT" && this.#lastText !== undefined) return;
      this.#channel.push({ error: `${this.path}: cannot read: ${(error as NodeJS.ErrnoException).code ?? describeError(error)}` });
      return;
    }
    if (text === this.#lastText) return;
    this.#lastText = text;
    let read: MeshFileRead;
    try {
      read = rereadMeshFileText(this.#last, text, meshFileFormat(this.path));
    } catch (error) {
      this.#channel.push({ error: `${this.path}: ${describeError(error)}` });
      return;
    }
    const unchanged = read.snapshot === this.#last?.snapshot;
    this.#last = read;
    if (!unchanged) this.#channel.push({ snapshot: read.snapshot });
  }
}
