/**
 * Values by socket address (IP and port), kept as IPs by port. An assignment has one port or a
 * few, and its IPs are strings the registry or node list already holds (hashed once), so no
 * `ip:port` string is built and hashed per endpoint. Equal pairs are equal `hostPort` strings.
 */
import { getOrInsert } from "./maps.js";

export class AddressMap<V> {
  readonly #byPort = new Map<number, Map<string, V>>();

  get(ip: string, port: number): V | undefined {
    return this.#byPort.get(port)?.get(ip);
  }

  set(ip: string, port: number, value: V): void {
    getOrInsert(this.#byPort, port, () => new Map<string, V>()).set(ip, value);
  }
}
