/**
 * A tiny test-only SDS server (Envoy's `SecretDiscoveryService` over gRPC): serves
 * `tls_certificate` and `validation_context` secrets by name, state of the world (`StreamSecrets`)
 * and incremental (`DeltaSecrets`). aether-xds does not serve SDS — SPIRE's agent does in
 * production — so this lives under test/. It listens on a Unix socket (reachable from Envoys in
 * any network namespace) or a loopback TCP port, pushes changes made with `set`/`remove` to every
 * stream that asked for the secret, and records every request (ACKs, NACKs) in `log`.
 *
 * State of the world: a response carries every requested secret that exists, sent when the
 * requested names change, when the request's version is not the current one, or on a change; an
 * ACK (current version, nonce of the last response) gets nothing. A NACK is recorded and not
 * answered. Delta: each secret is versioned by the hash of its bytes; new or changed subscribed
 * secrets are sent, and subscribed secrets that disappear are listed in `removed_resources`.
 */
import { createHash } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import type { KeyPair } from "./pki.js";
import { envoyRoot, loadGrpcPackage, packAny, SECRET_TYPE_URL } from "./xds-protos.js";

/** A `envoy.extensions.transport_sockets.tls.v3.Secret` in Envoy's JSON field names. */
export interface SecretJson {
  readonly name: string;
  readonly tls_certificate?: { certificate_chain: { inline_string: string }; private_key: { inline_string: string } };
  readonly validation_context?: { trusted_ca: { inline_string: string } };
}

export function tlsCertificateSecret(name: string, pair: Pick<KeyPair, "certPem" | "keyPem">): SecretJson {
  return { name, tls_certificate: { certificate_chain: { inline_string: pair.certPem }, private_key: { inline_string: pair.keyPem } } };
}

export function validationContextSecret(name: string, bundlePem: string): SecretJson {
  return { name, validation_context: { trusted_ca: { inline_string: bundlePem } } };
}

export interface SdsRequestRecord {
  readonly stream: number;
  readonly kind: "sotw" | "delta";
  readonly names: readonly string[];
  readonly version: string;
  readonly nonce: string;
  /** Delta only: the names the request unsubscribed. */
  readonly unsubscribed?: readonly string[];
  readonly nack?: string;
  readonly node?: string;
}

export type SdsListen = { readonly socketPath: string } | { readonly host: string; readonly port?: number };

export interface SdsServer {
  /** For a bootstrap cluster endpoint: `{pipe: {path}}` or `{socket_address: {address, port_value}}`. */
  readonly envoyAddress: Record<string, unknown>;
  /** For a gRPC client: `unix:<path>` or `host:port`. */
  readonly target: string;
  readonly log: readonly SdsRequestRecord[];
  /** Adds or replaces a secret and pushes it to every stream that asked for it. */
  set(secret: SecretJson): void;
  remove(name: string): void;
  /** Resolves with the first request (already seen or future) that matches. */
  waitFor(predicate: (record: SdsRequestRecord) => boolean, timeoutMs?: number): Promise<SdsRequestRecord>;
  stop(): Promise<void>;
}

const SECRET_TYPE = "envoy.extensions.transport_sockets.tls.v3.Secret";
const root = () => envoyRoot(["envoy/extensions/transport_sockets/tls/v3/secret.proto"]);

interface Encoded {
  readonly any: { type_url: string; value: Buffer };
  readonly version: string;
}

function encode(secret: SecretJson): Encoded {
  const any = packAny(root(), SECRET_TYPE, secret);
  return { any, version: createHash("sha256").update(any.value).digest("hex").slice(0, 16) };
}

type Call = grpc.ServerDuplexStream<any, any>;

export async function startSdsServer(listen: SdsListen, initial: readonly SecretJson[] = []): Promise<SdsServer> {
  const secrets = new Map<string, Encoded>(initial.map((s) => [s.name, encode(s)]));
  let version = 1;
  let streams = 0;
  const log: SdsRequestRecord[] = [];
  const waiters: { predicate: (r: SdsRequestRecord) => boolean; resolve: (r: SdsRequestRecord) => void }[] = [];
  const sotw = new Set<{ names: Set<string>; push: () => void }>();
  const deltas = new Set<{ subscribed: Set<string>; push: () => void }>();

  function record(entry: SdsRequestRecord): void {
    log.push(entry);
    for (const waiter of [...waiters]) {
      if (waiter.predicate(entry)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(entry);
      }
    }
  }

  function streamSecrets(call: Call): void {
    const id = ++streams;
    let nonce = 0;
    let lastNonce = "";
    const state = { names: new Set<string>(), push: () => send() };
    const send = () => {
      const resources = [...state.names].sort().flatMap((name) => secrets.get(name)?.any ?? []);
      if (resources.length === 0) return;
      lastNonce = String(++nonce);
      call.write({ version_info: String(version), resources, type_url: SECRET_TYPE_URL, nonce: lastNonce });
    };
    sotw.add(state);
    call.on("data", (request: any) => {
      const names = [...(request.resource_names ?? [])] as string[];
      const nack = request.error_detail?.message as string | undefined;
      record({
        stream: id,
        kind: "sotw",
        names,
        version: request.version_info ?? "",
        nonce: request.response_nonce ?? "",
        node: request.node?.id,
        ...(nack !== undefined ? { nack } : {}),
      });
      if (request.response_nonce && request.response_nonce !== lastNonce) return; // stale
      const changed = names.length !== state.names.size || names.some((n) => !state.names.has(n));
      state.names = new Set(names);
      if (nack !== undefined && !changed) return;
      if (changed || request.version_info !== String(version)) send();
    });
    const end = () => sotw.delete(state);
    call.on("end", () => {
      end();
      call.end();
    });
    call.on("error", end);
    call.on("cancelled", end);
  }

  function deltaSecrets(call: Call): void {
    const id = ++streams;
    let nonce = 0;
    const sent = new Map<string, string>();
    const state = { subscribed: new Set<string>(), push: () => send() };
    const send = () => {
      const resources = [];
      const removed = [];
      for (const name of [...state.subscribed].sort()) {
        const secret = secrets.get(name);
        if (secret && sent.get(name) !== secret.version) {
          resources.push({ name, version: secret.version, resource: secret.any });
          sent.set(name, secret.version);
        } else if (!secret && sent.has(name)) {
          removed.push(name);
          sent.delete(name);
        }
      }
      if (resources.length === 0 && removed.length === 0) return;
      call.write({ system_version_info: String(version), resources, type_url: SECRET_TYPE_URL, removed_resources: removed, nonce: String(++nonce) });
    };
    deltas.add(state);
    call.on("data", (request: any) => {
      const nack = request.error_detail?.message as string | undefined;
      const subscribe = [...(request.resource_names_subscribe ?? [])] as string[];
      const unsubscribed = [...(request.resource_names_unsubscribe ?? [])] as string[];
      record({
        stream: id,
        kind: "delta",
        names: subscribe,
        unsubscribed,
        version: "",
        nonce: request.response_nonce ?? "",
        node: request.node?.id,
        ...(nack !== undefined ? { nack } : {}),
      });
      for (const [name, known] of Object.entries((request.initial_resource_versions ?? {}) as Record<string, string>)) {
        state.subscribed.add(name);
        sent.set(name, known);
      }
      for (const name of subscribe) state.subscribed.add(name);
      for (const name of unsubscribed) {
        state.subscribed.delete(name);
        sent.delete(name);
      }
      send();
    });
    const end = () => deltas.delete(state);
    call.on("end", () => {
      end();
      call.end();
    });
    call.on("error", end);
    call.on("cancelled", end);
  }

  function changed(name: string): void {
    version++;
    for (const state of sotw) if (state.names.has(name)) state.push();
    for (const state of deltas) if (state.subscribed.has(name)) state.push();
  }

  const sds = loadGrpcPackage(["envoy/service/secret/v3/sds.proto"]) as any;
  const server = new grpc.Server();
  server.addService(sds.envoy.service.secret.v3.SecretDiscoveryService.service, {
    StreamSecrets: streamSecrets,
    DeltaSecrets: deltaSecrets,
    FetchSecrets: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => callback({ code: grpc.status.UNIMPLEMENTED }),
  });
  const bindTo = "socketPath" in listen ? `unix:${listen.socketPath}` : `${listen.host}:${listen.port ?? 0}`;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(bindTo, grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  const envoyAddress = "socketPath" in listen ? { pipe: { path: listen.socketPath } } : { socket_address: { address: listen.host, port_value: port } };
  const target = "socketPath" in listen ? `unix:${listen.socketPath}` : `${listen.host}:${port}`;

  return {
    envoyAddress,
    target,
    log,
    set(secret) {
      secrets.set(secret.name, encode(secret));
      changed(secret.name);
    },
    remove(name) {
      if (secrets.delete(name)) changed(name);
    },
    waitFor(predicate, timeoutMs = 10_000) {
      const seen = log.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: (r: SdsRequestRecord) => {
            clearTimeout(timer);
            resolve(r);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`no matching SDS request within ${timeoutMs} ms; seen: ${JSON.stringify(log)}`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2_000).unref();
      }),
  };
}
