/**
 * TLS transport sockets. Every upstream socket presents a source SVID from SDS and pins the
 * destination identity's exact URI SANs; validation is either the shared trust domain's bundle
 * from SDS or, under federation, the SPIFFE certificate validator with every trust domain's bundle.
 */

import type { DataSource, TransportSocket } from "../../gen/envoy/config/core/v3/base.js";
import type { ConfigSource } from "../../gen/envoy/config/core/v3/config_source.js";
import type { TypedExtensionConfig } from "../../gen/envoy/config/core/v3/extension.js";
import { type SubjectAltNameMatcher, SubjectAltNameMatcher_SanType } from "../../gen/envoy/extensions/transport_sockets/tls/v3/common.js";
import { CommonTlsContext, type UpstreamTlsContext } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import { remember } from "../util/maps.js";
import { pack, packEncodedInterim } from "./any.js";
import { interimSpace } from "./slabs.js";
import { DOWNSTREAM_TLS_CONTEXT, EXTENSION, FILTER_STATE_OVERRIDE, ON_DEMAND_SECRET, SPIFFE_VALIDATOR_CONFIG, UPSTREAM_TLS_CONTEXT } from "./types.js";
import { BinaryWriter, delimitedFieldSize, putDelimitedHeader, writeDelimitedHeader, writeStringField } from "./wire.js";

/** How peers' certificates are validated; derived once per compile from the mesh's trust. */
export type TrustValidation =
  | { readonly kind: "sds-bundle"; readonly bundleSecret: string; readonly sds: ConfigSource }
  | {
      readonly kind: "spiffe";
      /** Every trust domain, with its inline bundle unless `bundles` holds them all. */
      readonly trustDomains: readonly { readonly name: string; readonly bundle?: DataSource }[];
      /** A SPIFFE bundle map (Envoy watches a file source); takes precedence over per-domain bundles. */
      readonly bundles?: DataSource;
    };

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

/**
 * Per-source sockets never resume a session (`max_session_keys: 0`): a resumed session is keyed
 * without the certificate that created it, so one source could resume another's.
 */
const NO_SESSION_RESUMPTION = 0;

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
  perSource: boolean,
): (sni: string, spiffeId: string) => TransportSocket {
  const rest = commonTlsContext(undefined, shared.alpn, shared.validation, shared.pinnedSans.map(uriSan));
  const restBytes = CommonTlsContext.encode(rest).finish();
  // An identity's context is the same for both SNIs (waypoint and local): one object for the two.
  const contexts = new Map<string, CommonTlsContext>();
  // Each SNI's field, encoded once (a destination has two: waypoint and local).
  const sniFields = new Map<string, Uint8Array>();
  return (sni, spiffeId) => {
    const certificate = certificates(spiffeId);
    const context = contexts.get(spiffeId) ?? remember(contexts, spiffeId, { tls_certificate_sds_secret_configs: certificate.configs, ...rest });
    const message: UpstreamTlsContext = perSource
      ? { common_tls_context: context, sni, max_session_keys: NO_SESSION_RESUMPTION }
      : { common_tls_context: context, sni };
    const sniField = sniFields.get(sni) ?? remember(sniFields, sni, encodedSniField(sni));
    const bytes = splicedUpstreamContext(certificate.bytes, restBytes, sniField, perSource ? NO_RESUMPTION_FIELD : NOTHING);
    return { name: EXTENSION.tlsTransportSocket, typed_config: packEncodedInterim(UPSTREAM_TLS_CONTEXT.typeName, bytes, message) };
  };
}

const NOTHING = new Uint8Array(0);

/**
 * An UpstreamTlsContext's bytes from encoded parts: its `common_tls_context` as two parts (their
 * fields in the generated encoder's order), then its `sni` field and any fields after it. Written
 * straight into slab space at its final size, so the parts are copied once; one cluster carries
 * each socket, so its bytes later move into the cluster's encoding (`packEncodedInterim`).
 */
function splicedUpstreamContext(contextHead: Uint8Array, contextTail: Uint8Array, sniField: Uint8Array, after: Uint8Array): Uint8Array {
  const contextLength = contextHead.length + contextTail.length;
  const contextField = delimitedFieldSize(UPSTREAM_TLS.commonTlsContext, contextLength);
  const bytes = interimSpace(contextField + sniField.length + after.length);
  const payload = putDelimitedHeader(bytes, 0, UPSTREAM_TLS.commonTlsContext, contextLength);
  bytes.set(contextHead, payload);
  bytes.set(contextTail, payload + contextHead.length);
  bytes.set(sniField, contextField);
  bytes.set(after, contextField + sniField.length);
  return bytes;
}

/** The `sni` field as the generated encoder writes it (nothing for an empty SNI). */
function encodedSniField(sni: string): Uint8Array {
  const writer = new BinaryWriter();
  writeStringField(writer, UPSTREAM_TLS.sni, sni);
  return writer.finish();
}

/**
 * Where the certificate selector finds the source's SVID: the SDS secret named by the identity the
 * downstream listener stamped (`envoy.tls.certificate_mappers.on_demand_secret`), else the node's
 * own, which is fetched ahead of the first connection.
 */
export interface CertificateSelection {
  /** The selector's own gRPC SDS source (never ADS). */
  readonly sds: ConfigSource;
  readonly defaultIdentity: string;
}

/**
 * Upstream sockets to one destination whose client certificate is chosen per connection, so one
 * socket serves every source and the cluster does not depend on which pods the node hosts. They
 * differ only in SNI: their context (pins, validation, ALPN, selector) is one object, encoded once
 * and spliced into each socket's bytes (`splicedUpstreamContext`). Each SNI names one cluster,
 * which alone carries that socket.
 */
export function selectedCertificateSockets(
  shared: Omit<UpstreamSocketSpec, "sni" | "source">,
  selection: CertificateSelection,
): (sni: string) => TransportSocket {
  const context = commonTlsContext(undefined, shared.alpn, shared.validation, shared.pinnedSans.map(uriSan));
  context.custom_tls_certificate_selector = certificateSelector(selection);
  const contextBytes = CommonTlsContext.encode(context).finish();
  return (sni) => {
    const message: UpstreamTlsContext = { common_tls_context: context, sni, max_session_keys: NO_SESSION_RESUMPTION };
    const bytes = splicedUpstreamContext(contextBytes, NOTHING, encodedSniField(sni), NO_RESUMPTION_FIELD);
    return { name: EXTENSION.tlsTransportSocket, typed_config: packEncodedInterim(UPSTREAM_TLS_CONTEXT.typeName, bytes, message) };
  };
}

/** The selector is the same for every socket of a node: built once per selection (compiled messages are never mutated). */
const selectors = new WeakMap<CertificateSelection, TypedExtensionConfig>();

function certificateSelector(selection: CertificateSelection): TypedExtensionConfig {
  let selector = selectors.get(selection);
  if (!selector) {
    selector = buildCertificateSelector(selection);
    selectors.set(selection, selector);
  }
  return selector;
}

function buildCertificateSelector(selection: CertificateSelection): TypedExtensionConfig {
  const mapper = { name: EXTENSION.filterStateOverrideMapper, typed_config: pack(FILTER_STATE_OVERRIDE, { default_value: selection.defaultIdentity }) };
  return {
    name: EXTENSION.onDemandSecretSelector,
    typed_config: pack(ON_DEMAND_SECRET, { config_source: selection.sds, certificate_mapper: mapper, prefetch_secret_names: [selection.defaultIdentity] }),
  };
}

/** One upstream socket with a fixed client certificate from SDS. */
export function upstreamTlsSocket(spec: UpstreamSocketSpec): TransportSocket {
  const message: UpstreamTlsContext = {
    common_tls_context: commonTlsContext(spec.source, spec.alpn, spec.validation, spec.pinnedSans.map(uriSan)),
    sni: spec.sni,
  };
  return { name: EXTENSION.tlsTransportSocket, typed_config: pack(UPSTREAM_TLS_CONTEXT, message) };
}

/** UpstreamTlsContext field numbers (proto/envoy/extensions/transport_sockets/tls/v3/tls.proto). */
const UPSTREAM_TLS = { commonTlsContext: 1, sni: 2, maxSessionKeys: 4 } as const;

/** `max_session_keys`: an empty UInt32Value, i.e. 0. */
const NO_RESUMPTION_FIELD = writeDelimitedHeader(new BinaryWriter(), UPSTREAM_TLS.maxSessionKeys, 0).finish();

export interface DownstreamSocketSpec {
  readonly alpn: readonly string[];
  readonly server: TlsIdentity;
  readonly validation: TrustValidation;
  /** URI SAN prefixes a client certificate must match one of (e.g. the workload shape `spiffe://<td>/ns/`). */
  readonly clientSanPrefixes: readonly string[];
}

/** Terminates mTLS: presents the server's SVID, requires and validates a client certificate. */
export function downstreamTlsSocket(spec: DownstreamSocketSpec): TransportSocket {
  return {
    name: EXTENSION.tlsTransportSocket,
    typed_config: pack(DOWNSTREAM_TLS_CONTEXT, {
      common_tls_context: commonTlsContext(spec.server, spec.alpn, spec.validation, spec.clientSanPrefixes.map(uriSanPrefix)),
      require_client_certificate: true,
    }),
  };
}

/** The context; without `identity`, everything but the certificate (see `upstreamSockets`). */
function commonTlsContext(
  identity: TlsIdentity | undefined,
  alpn: readonly string[],
  validation: TrustValidation,
  sans: readonly SubjectAltNameMatcher[],
): CommonTlsContext {
  const context: CommonTlsContext = {
    ...(identity ? { tls_certificate_sds_secret_configs: [{ name: identity.spiffeId, sds_config: identity.sds }] } : {}),
    ...validationOf(validation, sans),
  };
  if (alpn.length > 0) context.alpn_protocols = [...alpn];
  return context;
}

function uriSan(spiffeId: string): SubjectAltNameMatcher {
  return { san_type: SubjectAltNameMatcher_SanType.URI, matcher: { exact: spiffeId } };
}

function uriSanPrefix(prefix: string): SubjectAltNameMatcher {
  return { san_type: SubjectAltNameMatcher_SanType.URI, matcher: { prefix } };
}

function validationOf(validation: TrustValidation, sans: readonly SubjectAltNameMatcher[]): CommonTlsContext {
  const pins = sans.length > 0 ? { match_typed_subject_alt_names: [...sans] } : {};
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
          // Envoy requires the domains listed even when the bundle map supplies their bundles.
          trust_domains: validation.trustDomains.map((domain) => (domain.bundle ? { name: domain.name, trust_bundle: domain.bundle } : { name: domain.name })),
          ...(validation.bundles ? { trust_bundles: validation.bundles } : {}),
        }),
      },
      ...pins,
    },
  };
}
