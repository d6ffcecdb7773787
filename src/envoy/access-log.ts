/** Access loggers: a text line on stdout, or entries streamed to a gRPC access-log service. */
import type { AccessLog } from "../../gen/envoy/config/accesslog/v3/accesslog.js";
import { ApiVersion } from "../../gen/envoy/config/core/v3/config_source.js";
import type { CommonGrpcAccessLogConfig } from "../../gen/envoy/extensions/access_loggers/grpc/v3/als.js";
import { packOwned } from "./any.js";
import { EXTENSION, HTTP_GRPC_ACCESS_LOG, STDOUT_ACCESS_LOG, TCP_GRPC_ACCESS_LOG } from "./types.js";

/**
 * One line per request (HTTP) or connection (TCP), in Envoy's substitution format. `interim`: one
 * listener alone carries the log (see `packInterim`).
 */
export function stdoutAccessLog(format: string, interim: boolean): AccessLog {
  return {
    name: EXTENSION.stdoutAccessLog,
    typed_config: packOwned(STDOUT_ACCESS_LOG, { log_format: { text_format_source: { inline_string: format } } }, interim),
  };
}

/**
 * Entries to a gRPC access-log service on `cluster`. Each tag is a substitution format, so the
 * entry carries what the text line would (identities, reporter) next to Envoy's own fields.
 * `interim`: as for `stdoutAccessLog`.
 */
export function grpcAccessLog(http: boolean, logName: string, cluster: string, tags: ReadonlyMap<string, string>, interim: boolean): AccessLog {
  const common: CommonGrpcAccessLogConfig = {
    log_name: logName,
    grpc_service: { envoy_grpc: { cluster_name: cluster } },
    transport_api_version: ApiVersion.V3,
    custom_tags: [...tags].map(([tag, value]) => ({ tag, value })),
  };
  return http
    ? { name: EXTENSION.httpGrpcAccessLog, typed_config: packOwned(HTTP_GRPC_ACCESS_LOG, { common_config: common }, interim) }
    : { name: EXTENSION.tcpGrpcAccessLog, typed_config: packOwned(TCP_GRPC_ACCESS_LOG, { common_config: common }, interim) };
}
