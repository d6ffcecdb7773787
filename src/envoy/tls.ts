/**
 * TLS transport sockets. Every upstream socket presents a source SVID from SDS and pins the
 * destination identity's exact URI SANs; validation is either the shared trust domain's bundle
 * from SDS or, under federation, the SPIFFE certificate validator with every trust domain's bundle.
 */
import type { DataSource, TransportSocket } from "../../gen/envoy/config/core/v3/base.js";
import type { ConfigSource } from "../../gen/envoy/config/core/v3/config_source.js";
import { SubjectAltNameMatcher_SanType, type SubjectAltNameMatcher } from "../../gen/envoy/extensions/transport_sockets/tls/v3/common.js";
import type { CommonTlsContext } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import { pack } from "./any.js";
import { DOWNSTREAM_TLS_CONTEXT, EXTENSION, SPIFFE_VALIDATOR_CONFIG, UPSTREAM_TLS_CONTEXT } from "./types.js";

/** How peers' certificates are validated; derived once per compile from the mesh's trust. */
export type TrustValidation =
  | { readonly kind: "sds-bundle"; readonly bundleSecret: string; readonly sds: ConfigSource }
  | { readonly kind: "spiffe"; readonly trustDomains: readonly { readonly name: string; readonly bundle: DataSource }[] };

export interface TlsIdentity {
  /** The SPIFFE ID whose SVID this side presents; also its SDS secret name. */
  readonly spiffeId: string;
  readonly sds: ConfigSource;
}

export interface UpstreamSocketSpec {
  readonly sni: string;
  readonly alpn: readonly string[];
  readonly source: TlsIdentity;
  /** Exact URI SANs the destination must present. */
  readonly pinnedSans: readonly string[];
  readonly validation: TrustValidation;
}

export function upstreamTlsSocket(spec: UpstreamSocketSpec): TransportSocket {
  return {
    name: EXTENSION.tlsTransportSocket,
    typed_config: pack(UPSTREAM_TLS_CONTEXT, {
      common_tls_context: commonTlsContext(spec.source, spec.alpn, spec.validation, spec.pinnedSans),
      sni: spec.sni,
    }),
  };
}

export interface DownstreamSocketSpec {
  readonly alpn: readonly string[];
  readonly server: TlsIdentity;
  readonly validation: TrustValidation;
}

/** Terminates mTLS: presents the server's SVID, requires and validates a client certificate. */
export function downstreamTlsSocket(spec: DownstreamSocketSpec): TransportSocket {
  return {
    name: EXTENSION.tlsTransportSocket,
    typed_config: pack(DOWNSTREAM_TLS_CONTEXT, {
      common_tls_context: commonTlsContext(spec.server, spec.alpn, spec.validation, []),
      require_client_certificate: true,
    }),
  };
}

function commonTlsContext(
  identity: TlsIdentity,
  alpn: readonly string[],
  validation: TrustValidation,
  pinnedSans: readonly string[],
): CommonTlsContext {
  const context: CommonTlsContext = {
    tls_certificate_sds_secret_configs: [{ name: identity.spiffeId, sds_config: identity.sds }],
    ...validationOf(validation, pinnedSans.map(uriSan)),
  };
  if (alpn.length > 0) context.alpn_protocols = [...alpn];
  return context;
}

function uriSan(spiffeId: string): SubjectAltNameMatcher {
  return { san_type: SubjectAltNameMatcher_SanType.URI, matcher: { exact: spiffeId } };
}

function validationOf(validation: TrustValidation, sans: SubjectAltNameMatcher[]): CommonTlsContext {
  const pins = sans.length > 0 ? { match_typed_subject_alt_names: sans } : {};
  if (validation.kind === "sds-bundle") {
    // The SDS bundle is merged into the default context, which carries the SAN pins.
    return {
      combined_validation_context: {
        default_validation_context: pins,
        validation_context_sds_secret_config: { name: validation.bundleSecret, sds_config: validation.sds },
      },
    };
  }
  return {
    validation_context: {
      // The SPIFFE validator picks the bundle by the trust domain of the peer's URI SAN.
      custom_validator_config: {
        name: EXTENSION.spiffeValidator,
        typed_config: pack(SPIFFE_VALIDATOR_CONFIG, {
          trust_domains: validation.trustDomains.map((domain) => ({ name: domain.name, trust_bundle: domain.bundle })),
        }),
      },
      ...pins,
    },
  };
}
