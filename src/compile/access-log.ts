/**
 * Access logs (README, "Access logs"): what each reporter's line carries, so the identities a
 * connection used can be checked. A source line (a pod's outbound listeners) carries the identity
 * the listener stamped and the upstream peer's URI SAN; a destination line (a pod's inbound
 * listener) carries the downstream peer's URI SAN; both carry the request id, so the two join on
 * it. A waypoint line (the tunnel) carries the SNI it routed on: it sees no certificate.
 */
import type { AccessLog } from "../../gen/envoy/config/accesslog/v3/accesslog.js";
import { grpcAccessLog, stdoutAccessLog } from "../envoy/access-log.js";
import { FILTER_STATE } from "../envoy/types.js";
import type { NodePlan } from "../plan/node-plan.js";

export type Reporter = "source" | "destination" | "waypoint";

export interface LogSite {
  readonly reporter: Reporter;
  readonly listener: string;
  /** An HTTP connection manager's log (per request), else a TCP proxy's (per connection). */
  readonly http: boolean;
  /** A source line: the pod whose listener it is (its SPIFFE ID). */
  readonly sourceIdentity?: string;
  /** Whether one listener alone carries the log (a pod's own), as `ProxyExtras.oneListener`. */
  readonly oneListener?: boolean;
}

/** The access loggers of one proxy filter; none when access logs are off. */
export function accessLogs(plan: NodePlan, site: LogSite): AccessLog[] {
  const setting = plan.options.settings.accessLog;
  if (setting === "off") return [];
  const fields = logFields(plan, site);
  const interim = site.oneListener === true;
  if (setting === "stdout") return [stdoutAccessLog(`[%START_TIME%] ${[...fields].map(([key, value]) => `${key}=${value}`).join(" ")}\n`, interim)];
  return [grpcAccessLog(site.http, `aether_${site.reporter}`, setting.grpcCluster, fields, interim)];
}

function logFields(plan: NodePlan, site: LogSite): Map<string, string> {
  const fields = new Map([
    ["reporter", site.reporter],
    ["listener", literal(site.listener)],
  ]);
  if (site.http) fields.set("request_id", "%REQ(X-REQUEST-ID)%");
  if (site.reporter === "source") {
    if (plan.options.sourceIdentity === "selector") {
      // What the certificate mapper read: the identity this connection's certificate was chosen by.
      fields.set("source_identity", filterState(FILTER_STATE.certificateMapperKey));
    } else {
      // No identity is stamped in `sockets` mode: the listener's pod, and the netns the socket matcher read.
      fields.set("source_identity", literal(site.sourceIdentity ?? "-"));
      fields.set("source_netns", filterState(plan.options.netnsFilterStateKey));
    }
    fields.set("upstream_peer", "%UPSTREAM_PEER_URI_SAN%");
  }
  if (site.reporter === "destination") fields.set("downstream_peer", "%DOWNSTREAM_PEER_URI_SAN%");
  if (site.reporter !== "source") fields.set("server_name", "%REQUESTED_SERVER_NAME%");
  if (site.reporter === "waypoint") fields.set("downstream", "%DOWNSTREAM_REMOTE_ADDRESS%");
  fields.set("upstream_cluster", "%UPSTREAM_CLUSTER%");
  fields.set("upstream_host", "%UPSTREAM_HOST%");
  if (site.http) fields.set("response_code", "%RESPONSE_CODE%");
  fields.set("flags", "%RESPONSE_FLAGS%");
  fields.set("duration_ms", "%DURATION%");
  return fields;
}

/** `:PLAIN`: the default (typed) rendering of a string object is `-`. */
function filterState(key: string): string {
  return `%FILTER_STATE(${key}:PLAIN)%`;
}

/** Text taken as is: `%` starts a command operator, so it is doubled. */
function literal(text: string): string {
  return text.replaceAll("%", "%%");
}
