/**
 * Test-only changes to a compiled bootstrap (rendered JSON), each named where a test uses it:
 *   - `instrument`: an admin endpoint and JSON access logs on every listener, tcp_proxy and
 *     HTTP connection manager — observation only, no behaviour change;
 *   - `pointClusterAt`: a stub cluster (the SDS / ADS servers' `xds_cluster`, `sds`, ...) at a
 *     test server's address (a Unix socket, reachable from any netns);
 *   - `inlineAssignments`: TEMPORARY for phase 1, until the ADS server (issue 12) serves EDS:
 *     every EDS cluster becomes STATIC with its ClusterLoadAssignment inline, and the ADS config
 *     and stub go when nothing uses ADS any more.
 * Each returns a copy.
 */

type Json = any;

export interface RenderedBootstrap {
  readonly [key: string]: unknown;
}

/** The access-log record every instrumented listener and filter writes (JSON lines; null where Envoy has no value). */
export interface AccessLogEntry {
  readonly kind: "listener" | "tcp_proxy" | "http";
  readonly listener: string;
  readonly chain: string | null;
  readonly sni: string | null;
  readonly downstream_remote: string | null;
  readonly downstream_local: string | null;
  readonly downstream_tls: string | null;
  readonly downstream_peer_uri: string | null;
  readonly downstream_local_uri: string | null;
  readonly upstream_cluster: string | null;
  readonly upstream_host: string | null;
  readonly upstream_tls: string | null;
  readonly upstream_peer_uri: string | null;
  readonly response_flags: string | null;
  readonly bytes_received: number | string | null;
  readonly bytes_sent: number | string | null;
  readonly status?: number | string | null;
  readonly protocol?: string | null;
  readonly path?: string | null;
  readonly xfcc?: string | null;
}

const CONNECTION_FIELDS = {
  start: "%START_TIME%",
  chain: "%FILTER_CHAIN_NAME%",
  sni: "%REQUESTED_SERVER_NAME%",
  downstream_remote: "%DOWNSTREAM_REMOTE_ADDRESS%",
  downstream_local: "%DOWNSTREAM_LOCAL_ADDRESS%",
  downstream_tls: "%DOWNSTREAM_TLS_VERSION%",
  downstream_peer_uri: "%DOWNSTREAM_PEER_URI_SAN%",
  downstream_local_uri: "%DOWNSTREAM_LOCAL_URI_SAN%",
  upstream_cluster: "%UPSTREAM_CLUSTER%",
  upstream_host: "%UPSTREAM_HOST%",
  upstream_tls: "%UPSTREAM_TLS_VERSION%",
  upstream_peer_uri: "%UPSTREAM_PEER_URI_SAN%",
  response_flags: "%RESPONSE_FLAGS%",
  bytes_received: "%BYTES_RECEIVED%",
  bytes_sent: "%BYTES_SENT%",
};

const HTTP_FIELDS = {
  status: "%RESPONSE_CODE%",
  protocol: "%PROTOCOL%",
  path: "%REQ(:PATH)%",
  xfcc: "%REQ(X-FORWARDED-CLIENT-CERT)%",
};

function fileAccessLog(path: string, fields: Record<string, string>): Json {
  return {
    name: "envoy.access_loggers.file",
    typed_config: { "@type": "type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog", path, log_format: { json_format: fields } },
  };
}

export interface InstrumentOptions {
  /** `{pipe: {path}}` or `{socket_address: {address, port_value}}`. */
  readonly adminAddress: Json;
  readonly accessLogPath: string;
}

export function instrument(bootstrap: RenderedBootstrap, options: InstrumentOptions): RenderedBootstrap {
  const copy = structuredClone(bootstrap) as Json;
  copy.admin = { address: options.adminAddress };
  for (const listener of copy.static_resources?.listeners ?? []) {
    const base = { ...CONNECTION_FIELDS, listener: listener.name };
    listener.access_log = [...(listener.access_log ?? []), fileAccessLog(options.accessLogPath, { ...base, kind: "listener" })];
    for (const chain of [...(listener.filter_chains ?? []), ...(listener.default_filter_chain ? [listener.default_filter_chain] : [])]) {
      for (const filter of chain.filters ?? []) {
        const config = filter.typed_config;
        if (config?.["@type"]?.endsWith(".TcpProxy"))
          config.access_log = [...(config.access_log ?? []), fileAccessLog(options.accessLogPath, { ...base, kind: "tcp_proxy" })];
        if (config?.["@type"]?.endsWith(".HttpConnectionManager")) {
          config.access_log = [...(config.access_log ?? []), fileAccessLog(options.accessLogPath, { ...base, ...HTTP_FIELDS, kind: "http" })];
        }
      }
    }
  }
  return copy;
}

/** The cluster `name`'s single endpoint moved to `address` (`{pipe: {path}}` or a socket address). */
export function pointClusterAt(bootstrap: RenderedBootstrap, name: string, address: Json): RenderedBootstrap {
  const copy = structuredClone(bootstrap) as Json;
  const cluster = copy.static_resources.clusters.find((c: Json) => c.name === name);
  if (!cluster) throw new Error(`no cluster ${name} in the bootstrap`);
  cluster.load_assignment = { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address } }] }] };
  return copy;
}

/**
 * TEMPORARY (phase 1; phase 2 serves EDS from the ADS server of issue 12): every EDS cluster
 * becomes STATIC with its assignment (rendered ClusterLoadAssignment, matched by EDS service name)
 * inline. Then, if nothing refers to ADS any more, `dynamic_resources` and the ADS stub cluster go.
 */
export function inlineAssignments(bootstrap: RenderedBootstrap, assignments: readonly Json[]): RenderedBootstrap {
  const copy = structuredClone(bootstrap) as Json;
  const byName = new Map(assignments.map((a) => [a.cluster_name, a]));
  for (const cluster of copy.static_resources.clusters) {
    if (cluster.type !== "EDS") continue;
    const serviceName = cluster.eds_cluster_config?.service_name ?? cluster.name;
    const assignment = byName.get(serviceName);
    if (!assignment) throw new Error(`no ClusterLoadAssignment for EDS cluster ${cluster.name}`);
    delete cluster.eds_cluster_config;
    cluster.type = "STATIC";
    cluster.load_assignment = { ...assignment, cluster_name: cluster.name };
  }
  const adsCluster = copy.dynamic_resources?.ads_config?.grpc_services?.[0]?.envoy_grpc?.cluster_name;
  const { dynamic_resources: _unused, ...rest } = copy;
  if (adsCluster && !JSON.stringify(rest).includes('"ads":{}')) {
    delete copy.dynamic_resources;
    copy.static_resources.clusters = copy.static_resources.clusters.filter((c: Json) => c.name !== adsCluster);
  }
  return copy;
}

/**
 * A watched SPIFFE bundle map (`trust_bundles: {filename}`) must exist for Envoy to load the SPIFFE
 * validator, and the emitted path (e.g. /run/spire/...) is the node's, not the test's: each such
 * filename is rewritten to `bundleMapFile(trustDomains)`, a map the test wrote for the trust
 * domains listed beside it. Nothing else changes.
 */
export function withTestBundleMaps(bootstrap: RenderedBootstrap, bundleMapFile: (trustDomains: readonly string[]) => string): RenderedBootstrap {
  const copy = structuredClone(bootstrap) as Json;
  const visit = (value: Json): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (typeof value !== "object" || value === null) return;
    if (value.trust_bundles?.filename) {
      value.trust_bundles = { filename: bundleMapFile((value.trust_domains ?? []).map((domain: Json) => domain.name)) };
    }
    Object.values(value).forEach(visit);
  };
  visit(copy);
  return copy;
}
