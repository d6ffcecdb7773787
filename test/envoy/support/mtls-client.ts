/**
 * A TLS client for the data-plane tests, run as its own process (so it can run inside a network
 * namespace) with a JSON list of probes; prints one JSON list of results.
 *
 *   node --import tsx test/envoy/support/mtls-client.ts '[{"kind": "http", "host": ..., ...}]'
 *
 * A probe opens a TLS connection (client certificate optional, server verified against `caFile`,
 * SNI `servername`, ALPN `alpn`) — or, with `plain`, a cleartext TCP connection (what a pod's app
 * sends to its node's outbound listener) — then: `http` — one request (HTTP/2 when ALPN agreed h2
 * or `plain: "h2c"`, else HTTP/1.1; `:authority`/Host is `authority` or the SNI); `tcp` — writes
 * `payload` and reads until it has as many bytes back; `tls` — the handshake only. The server's name is NOT checked against the SNI (a SPIFFE SVID has only a URI
 * SAN): the result reports the server's URI SAN for the test to assert on. Failures are results
 * (`ok: false, error`), never exceptions.
 */
import { readFileSync } from "node:fs";
import { request as http1Request } from "node:http";
import { connect as http2Connect } from "node:http2";
import { type Socket, connect as tcpConnect } from "node:net";
import { type TLSSocket, connect as tlsConnect } from "node:tls";
import { pathToFileURL } from "node:url";

export interface Probe {
  readonly kind: "http" | "tcp" | "tls";
  readonly host: string;
  readonly port: number;
  /** SNI (TLS); also the default `:authority`. */
  readonly servername: string;
  /** Cleartext instead of TLS: HTTP/2 with prior knowledge (`h2c`) or HTTP/1.1 (`http1`). */
  readonly plain?: "h2c" | "http1";
  readonly authority?: string;
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly alpn?: readonly string[];
  readonly path?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly payload?: string;
  readonly timeoutMs?: number;
}

export interface ProbeResult {
  readonly ok: boolean;
  readonly error?: string;
  /** Where the failure happened: before/at the TLS handshake, or after it. */
  readonly stage?: "connect" | "handshake" | "exchange";
  readonly alpn?: string | false | null;
  readonly peerUri?: string;
  readonly status?: number;
  readonly body?: string;
  readonly echoed?: string;
}

function handshake(probe: Probe): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    if (!probe.caFile) return reject(new Error("a TLS probe needs caFile"));
    const socket = tlsConnect({
      host: probe.host,
      port: probe.port,
      servername: probe.servername,
      ca: readFileSync(probe.caFile),
      ...(probe.certFile ? { cert: readFileSync(probe.certFile), key: readFileSync(probe.keyFile!) } : {}),
      ALPNProtocols: [...(probe.alpn ?? [])],
      rejectUnauthorized: true,
      checkServerIdentity: () => undefined,
      session: undefined,
    });
    socket.setTimeout(probe.timeoutMs ?? 5_000, () => socket.destroy(new Error("timeout")));
    socket.once("secureConnect", () => resolve(socket));
    socket.once("error", reject);
    socket.once("close", () => reject(new Error("closed before the handshake completed")));
  });
}

function plainConnect(probe: Probe): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect({ host: probe.host, port: probe.port });
    socket.setTimeout(probe.timeoutMs ?? 5_000, () => socket.destroy(new Error("timeout")));
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

function uriSan(socket: TLSSocket): string | undefined {
  const san = socket.getPeerX509Certificate()?.subjectAltName ?? "";
  return /URI:([^,\s]+)/.exec(san)?.[1];
}

function httpExchange(socket: Socket, probe: Probe, h2: boolean): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = { ...(probe.headers ?? {}) };
    const authority = probe.authority ?? probe.servername;
    if (h2) {
      const session = http2Connect(`${probe.plain ? "http" : "https"}://${probe.servername}`, { createConnection: () => socket });
      session.on("error", reject);
      const stream = session.request({ ":path": probe.path ?? "/", ":method": "GET", ":authority": authority, ...headers });
      let body = "";
      let status = 0;
      stream.on("response", (h) => (status = Number(h[":status"])));
      stream.setEncoding("utf8");
      stream.on("data", (chunk) => (body += chunk));
      stream.on("end", () => {
        session.close();
        resolve({ status, body });
      });
      stream.on("error", reject);
    } else {
      const req = http1Request({ createConnection: () => socket, path: probe.path ?? "/", headers: { host: authority, ...headers } }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    }
  });
}

function tcpExchange(socket: Socket, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let echoed = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      echoed += chunk;
      if (echoed.length >= payload.length) resolve(echoed);
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(echoed));
    socket.write(payload);
  });
}

async function runPlain(probe: Probe): Promise<ProbeResult> {
  let socket: Socket;
  try {
    socket = await plainConnect(probe);
  } catch (error) {
    return { ok: false, stage: "connect", error: (error as Error).message };
  }
  try {
    if (probe.kind === "tcp") return { ok: true, echoed: await tcpExchange(socket, probe.payload ?? "ping") };
    if (probe.kind === "tls") throw new Error("a plain probe cannot be a TLS handshake");
    return { ok: true, ...(await httpExchange(socket, probe, probe.plain === "h2c")) };
  } catch (error) {
    return { ok: false, stage: "exchange", error: (error as Error).message };
  } finally {
    socket.destroy();
  }
}

export async function runProbe(probe: Probe): Promise<ProbeResult> {
  if (probe.plain) return runPlain(probe);
  let socket: TLSSocket;
  try {
    socket = await handshake(probe);
  } catch (error) {
    const message = (error as Error).message;
    return { ok: false, stage: /ECONNREFUSED|EHOSTUNREACH|ENETUNREACH/.test(message) ? "connect" : "handshake", error: message };
  }
  const peerUri = uriSan(socket);
  const base = { alpn: socket.alpnProtocol, ...(peerUri ? { peerUri } : {}) };
  try {
    if (probe.kind === "tls") return { ok: true, ...base };
    if (probe.kind === "tcp") return { ok: true, ...base, echoed: await tcpExchange(socket, probe.payload ?? "ping") };
    return { ok: true, ...base, ...(await httpExchange(socket, probe, socket.alpnProtocol === "h2")) };
  } catch (error) {
    return { ok: false, stage: "exchange", ...base, error: (error as Error).message };
  } finally {
    socket.destroy();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const probes = JSON.parse(process.argv[2] ?? "[]") as Probe[];
  const results = [];
  for (const probe of probes) results.push(await runProbe(probe));
  process.stdout.write(`${JSON.stringify(results)}\n`);
}
