/**
 * The test SDS server (test/envoy/support/sds-server.ts), driven by a gRPC client built from the
 * same Envoy protos: state of the world and delta, ACK/NACK, pushes and removals. It listens on a
 * Unix socket in a temporary directory (no network namespace needed). Envoy talks to it in
 * test/envoy/dataplane.test.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createPki, workloadId } from "./support/pki.js";
import { type SdsServer, startSdsServer, tlsCertificateSecret, validationContextSecret } from "./support/sds-server.js";
import { envoyRoot, loadGrpcPackage, SECRET_TYPE_URL, unpackAny } from "./support/xds-protos.js";

const dir = mkdtempSync(join(tmpdir(), "aether-sds-"));
const pki = createPki(join(dir, "pki"));
const frontendId = workloadId("aether.internal", "team-a", "frontend");
const checkoutId = workloadId("aether.internal", "team-a", "checkout");
const bundleName = "spiffe://aether.internal";
let server: SdsServer;
let client: any;

beforeAll(async () => {
  server = await startSdsServer({ socketPath: join(dir, "sds.sock") }, [
    tlsCertificateSecret(frontendId, pki.svid(frontendId)),
    validationContextSecret(bundleName, pki.bundle("aether.internal")),
  ]);
  const sds = loadGrpcPackage(["envoy/service/secret/v3/sds.proto"]) as any;
  client = new sds.envoy.service.secret.v3.SecretDiscoveryService(server.target, grpc.credentials.createInsecure());
});

afterAll(async () => {
  client?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const secretRoot = () => envoyRoot(["envoy/extensions/transport_sockets/tls/v3/secret.proto"]);

/** A bidirectional stream whose responses queue up for `next()`. */
function open(method: "StreamSecrets" | "DeltaSecrets") {
  const call = client[method]();
  const queue: any[] = [];
  const waiting: ((r: any) => void)[] = [];
  call.on("data", (response: any) => (waiting.length > 0 ? waiting.shift()!(response) : queue.push(response)));
  call.on("error", () => {});
  return {
    send: (request: object) => call.write({ node: { id: "test/node" }, type_url: SECRET_TYPE_URL, ...request }),
    next: (timeoutMs = 5_000) =>
      queue.length > 0
        ? Promise.resolve(queue.shift())
        : new Promise<any>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error("no response")), timeoutMs);
            waiting.push((r) => {
              clearTimeout(timer);
              resolve(r);
            });
          }),
    pending: () => queue.length,
    close: () => call.end(),
  };
}

const names = (response: any) => response.resources.map((any: any) => unpackAny(secretRoot(), any).name);
const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

describe("test SDS server, state of the world", () => {
  test("answers with the requested secrets that exist, decodable as Envoy Secrets", async () => {
    const stream = open("StreamSecrets");
    stream.send({ resource_names: [frontendId, bundleName, "spiffe://aether.internal/ns/x/sa/unknown"] });
    const response = await stream.next();
    expect(response.type_url).toBe(SECRET_TYPE_URL);
    expect(names(response)).toEqual([frontendId, bundleName].sort());
    const decoded = response.resources.map((any: any) => unpackAny(secretRoot(), any));
    const cert = decoded.find((s: any) => s.name === frontendId);
    expect(cert.tls_certificate.certificate_chain.inline_string).toBe(pki.svid(frontendId).certPem);
    expect(cert.tls_certificate.private_key.inline_string).toBe(pki.svid(frontendId).keyPem);
    expect(decoded.find((s: any) => s.name === bundleName).validation_context.trusted_ca.inline_string).toBe(pki.bundle("aether.internal"));
    stream.close();
  });

  test("an ACK gets nothing; a change to a subscribed secret is pushed with a new version; a NACK is recorded", async () => {
    const stream = open("StreamSecrets");
    stream.send({ resource_names: [checkoutId] });
    await settle();
    expect(stream.pending()).toBe(0); // nothing to send yet: the secret does not exist
    server.set(tlsCertificateSecret(checkoutId, pki.svid(checkoutId)));
    const first = await stream.next();
    expect(names(first)).toEqual([checkoutId]);
    stream.send({ resource_names: [checkoutId], version_info: first.version_info, response_nonce: first.nonce });
    await settle();
    expect(stream.pending()).toBe(0);
    server.set(tlsCertificateSecret(checkoutId, pki.svid(frontendId))); // rotated (to another key, for the test)
    const second = await stream.next();
    expect(Number(second.version_info)).toBeGreaterThan(Number(first.version_info));
    stream.send({
      resource_names: [checkoutId],
      version_info: first.version_info,
      response_nonce: second.nonce,
      error_detail: { code: 3, message: "bad secret" },
    });
    const nack = await server.waitFor((r) => r.nack === "bad secret");
    expect(nack).toMatchObject({ kind: "sotw", names: [checkoutId], node: "test/node" });
    await settle();
    expect(stream.pending()).toBe(0);
    stream.close();
  });
});

describe("test SDS server, delta", () => {
  test("sends subscribed secrets with per-secret versions, changes only, and removals", async () => {
    const stream = open("DeltaSecrets");
    stream.send({ resource_names_subscribe: [frontendId, bundleName] });
    const first = await stream.next();
    expect(first.resources.map((r: any) => r.name)).toEqual([frontendId, bundleName].sort());
    expect(first.resources.every((r: any) => /^[0-9a-f]{16}$/.test(r.version))).toBe(true);
    stream.send({ response_nonce: first.nonce });
    await settle();
    expect(stream.pending()).toBe(0);

    server.set(validationContextSecret(bundleName, `${pki.bundle("aether.internal")}${pki.bundle("west.aether")}`));
    const changed = await stream.next();
    expect(changed.resources.map((r: any) => r.name)).toEqual([bundleName]);

    server.remove(frontendId);
    const removed = await stream.next();
    expect(removed.removed_resources).toEqual([frontendId]);
    expect(removed.resources ?? []).toEqual([]);
    server.set(tlsCertificateSecret(frontendId, pki.svid(frontendId)));
    expect((await stream.next()).resources.map((r: any) => r.name)).toEqual([frontendId]);

    stream.send({ resource_names_unsubscribe: [bundleName], response_nonce: "x" });
    await server.waitFor((r) => r.unsubscribed?.includes(bundleName) === true);
    server.set(validationContextSecret(bundleName, pki.bundle("aether.internal")));
    await settle();
    expect(stream.pending()).toBe(0); // unsubscribed: no push
    stream.close();
  });
});
