/**
 * TLS transport sockets. Every upstream socket presents a source SVID from SDS and pins the
 * destination identity's exact URI SANs; validation is either the shared trust domain's bundle
 * from SDS or, under federation, the SPIFFE certificate validator with every trust domain's bundle.
 */

import { BinaryWriter } from "@bufbuild/protobuf/wire";
import type { DataSource, TransportSocket } from "../../gen/envoy/config/core/v3/base.js";
import type { ConfigSource } from "../../gen/envoy/config/core/v3/config_source.js";
import { type SubjectAltNameMatcher, SubjectAltNameMatcher_SanType } from "../../gen/envoy/extensions/transport_sockets/tls/v3/common.js";
import { CommonTlsContext } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import { pack, packEncoded } from "./any.js";
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

/** Encodes (once per identity) the client-certificate part of a CommonTlsContext. */
export type CertificateEncoder = (spiffeId: string) => { readonly bytes: Uint8Array; readonly configs: CommonTlsContext["tls_certificate_sds_secret_configs"] };

export function certificateEncoder(sds: ConfigSource): CertificateEncoder {
  const cache = new Map<string, ReturnType<CertificateEncoder>>();
  return (spiffeId) => {
    let entry = cache.get(spiffeId);
    if (!entry) {
      const configs = [{ name: spiffeId, sds_config: sds }];
      entry = { bytes: CommonTlsContext.encode({ tls_certificate_sds_secret_configs: configs }).finish(), configs };
      cache.set(spiffeId, entry);
    }
    return entry;
  };
}

/**
 * Sockets to one destination that differ only in SNI and client identity: everything else (SAN
 * pins, validation, ALPN) is encoded once, and each socket's UpstreamTlsContext is spliced from
 * pre-encoded parts. Protobuf fields are independent on the wire and the parts come in the order
 * the generated encoder writes them (certificates, validation, ALPN), so the bytes are exactly
 * those of encoding the whole message.
 */
export function upstreamSockets(
  shared: Omit<UpstreamSocketSpec, "sni" | "source">,
  certificates: CertificateEncoder,
): (sni: string, spiffeId: string) => TransportSocket {
  const rest = commonTlsContext(undefined, shared.alpn, shared.validation, shared.pinnedSans);
  const restBytes = CommonTlsContext.encode(rest).finish();
  return (sni, spiffeId) => {
    const certificate = certificates(spiffeId);
    const message = { common_tls_context: { tls_certificate_sds_secret_configs: certificate.configs, ...rest }, sni };
    const bytes = splice
      .uint32(10)
      .uint32(certificate.bytes.length + restBytes.length)
      .raw(certificate.bytes)
      .raw(restBytes)
      .uint32(18)
      .string(sni)
      .finish();
    return { name: EXTENSION.tlsTransportSocket, typed_config: packEncoded(UPSTREAM_TLS_CONTEXT.typeName, bytes, message) };
  };
}

/** Reused for every splice; `finish` copies the bytes out. */
const splice = new BinaryWriter();

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

/** The context; without `identity`, everything but the certificate (see `upstreamSockets`). */
function commonTlsContext(
  identity: TlsIdentity | undefined,
  alpn: readonly string[],
  validation: TrustValidation,
  pinnedSans: readonly string[],
): CommonTlsContext {
  const context: CommonTlsContext = {
    ...(identity ? { tls_certificate_sds_secret_configs: [{ name: identity.spiffeId, sds_config: identity.sds }] } : {}),
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
