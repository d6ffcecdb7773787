/**
 * The mTLS client (test/envoy/support/mtls-client.ts) against in-process servers on 127.0.0.1 (no
 * network namespace, no Envoy): it presents its SVID, reports the server's URI SAN, tells where a
 * failure happened, and speaks cleartext h2c / HTTP/1.1 for outbound-listener probes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import { afterAll, describe, expect, test } from "vitest";
import { httpEchoServer } from "./support/echo-app.js";
import { runProbe } from "./support/mtls-client.js";
import { createPki, workloadId } from "./support/pki.js";

const dir = mkdtempSync(join(tmpdir(), "aether-client-"));
const pki = createPki(dir);
const servers: Server[] = [];
afterAll(() => {
  for (const server of servers) server.close();
  rmSync(dir, { recursive: true, force: true });
});

const SERVER = workloadId("t.internal", "ns", "server");
const CLIENT = workloadId("t.internal", "ns", "client");

function listen(server: Server): Promise<number> {
  servers.push(server);
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)));
}

/** A TLS echo that requires a client certificate and first writes the client's URI SAN and SNI. */
async function tlsServer(): Promise<number> {
  const svid = pki.svid(SERVER);
  const server = createTlsServer(
    { cert: svid.certPem, key: svid.keyPem, ca: svid.bundlePem, requestCert: true, rejectUnauthorized: true },
    (socket: TLSSocket) => {
      const uri = /URI:(\S+)/.exec(socket.getPeerX509Certificate()?.subjectAltName ?? "")?.[1];
      socket.write(`${uri} ${(socket as TLSSocket & { servername?: string }).servername}|`);
      socket.pipe(socket);
    },
  );
  return listen(server);
}

describe("mTLS client", () => {
  test("presents its SVID with the SNI, reports the server's URI SAN, and exchanges bytes", async () => {
    const port = await tlsServer();
    const client = pki.svid(CLIENT);
    const payload = "p".repeat(200);
    const result = await runProbe({
      kind: "tcp",
      host: "127.0.0.1",
      port,
      servername: "8080",
      caFile: client.bundleFile,
      certFile: client.certFile,
      keyFile: client.keyFile,
      payload,
    });
    expect(result).toMatchObject({ ok: true, alpn: false, peerUri: SERVER });
    expect(result.echoed!.startsWith(`${CLIENT} 8080|`)).toBe(true); // the server saw the client's SVID and the SNI
  });

  test("says where it failed: nothing listening, a server it does not trust, a server that wants a certificate", async () => {
    const port = await tlsServer();
    const client = pki.svid(CLIENT);
    const stranger = createPki(join(dir, "other")).svid(CLIENT);
    const base = { kind: "tcp", host: "127.0.0.1", servername: "8080", payload: "x", timeoutMs: 3_000 } as const;
    const closed = await listen(httpEchoServer("x")).then((p) => {
      servers.pop()!.close();
      return p;
    });
    expect(await runProbe({ ...base, port: closed, caFile: client.bundleFile })).toMatchObject({ ok: false, stage: "connect" });
    expect(await runProbe({ ...base, port, caFile: stranger.bundleFile, certFile: client.certFile, keyFile: client.keyFile })).toMatchObject({
      ok: false,
      stage: "handshake",
    });
    expect((await runProbe({ ...base, port, caFile: client.bundleFile })).ok).toBe(false);
  });

  test("cleartext h2c and HTTP/1.1 with an explicit authority", async () => {
    const port = await listen(httpEchoServer("app"));
    const base = { kind: "http", host: "127.0.0.1", port, servername: "unused", authority: "checkout.team-a.mesh.aether:8080" } as const;
    for (const plain of ["h2c", "http1"] as const) {
      const result = await runProbe({ ...base, plain });
      expect(result).toMatchObject({ ok: true, status: 200 });
      expect(JSON.parse(result.body!)).toMatchObject({
        app: "app",
        protocol: plain === "h2c" ? "h2" : "http/1.1",
        authority: "checkout.team-a.mesh.aether:8080",
      });
    }
  });
});
