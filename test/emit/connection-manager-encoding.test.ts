import { describe, expect, test } from "vitest";
import { HttpConnectionManager } from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.js";
import { packedMessage } from "../../src/envoy/any.js";
import { encodeConnectionManager } from "../../src/envoy/connection-manager-encoding.js";
import { authorityHosts, egressTable } from "../../src/envoy/listener.js";
import { EXTENSION } from "../../src/envoy/types.js";
import { caseModes, compileCase, loadCase } from "../support/cases.js";

const generated = (manager: HttpConnectionManager) => Buffer.from(HttpConnectionManager.encode(manager).finish());

describe("the connection manager encoder writes exactly the generated encoder's bytes", () => {
  test.each(caseModes())("every HTTP connection manager of golden case %s (%s)", (name, mode) => {
    const filters = compileCase(loadCase(name), mode).listeners.flatMap((l) => (l.filter_chains ?? []).flatMap((chain) => chain.filters ?? []));
    const managers = filters.filter((f) => f.name === EXTENSION.httpConnectionManager);
    for (const filter of managers) {
      const manager = packedMessage(filter.typed_config!) as HttpConnectionManager;
      expect(Buffer.from(filter.typed_config!.value!).equals(generated(manager))).toBe(true);
    }
  });

  test("a shared list of virtual hosts under different names and fields; an empty list; no name; no route table", () => {
    const hosts = egressTable(
      authorityHosts([{ name: "a", domains: ["a.ns.mesh:80", "a.ns.mesh"], cluster: "outbound|80||a.ns.mesh" }], { retry_on: "reset" }),
    );
    const managers: HttpConnectionManager[] = [
      { codec_type: 0, stat_prefix: "one", route_config: { name: "one", virtual_hosts: hosts } },
      { stat_prefix: "two", route_config: { name: "two", virtual_hosts: hosts }, preserve_external_request_id: true, http_filters: [{ name: "f" }] },
      { stat_prefix: "three", route_config: { virtual_hosts: [] } },
      { stat_prefix: "four", route_config: { name: "", virtual_hosts: hosts } },
      { stat_prefix: "five" },
    ];
    for (const manager of managers) expect(Buffer.from(encodeConnectionManager(manager)).equals(generated(manager))).toBe(true);
  });
});
