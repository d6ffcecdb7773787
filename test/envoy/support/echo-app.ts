/**
 * A tiny echo app, one per "pod": run as its own process (in the pod's netns) with
 *   node --import tsx test/envoy/support/echo-app.ts '{"name": "...", "host": "0.0.0.0", "http": 8080, "tcp": 9090}'
 * - HTTP on `http`: HTTP/2 cleartext (prior knowledge, what Envoy's app cluster speaks on HTTP/2
 *   ports) and HTTP/1.1 on the same port, told apart by the connection preface. Every request gets
 *   200 and JSON `{app, protocol, method, path, xfcc, authority}` — `xfcc` is the
 *   x-forwarded-client-cert header it received (null when absent).
 * - TCP on each `tcp` port: echoes every byte back.
 * Port 0 picks a free port. Prints one line `listening {"http":[P...],"tcp":[Q...]}` once every port
 * is bound; exits on SIGTERM.
 */
import { createServer as createHttp1Server, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse } from "node:http2";
import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import { pathToFileURL } from "node:url";

export interface EchoAppConfig {
  readonly name: string;
  readonly host: string;
  readonly http?: readonly number[];
  readonly tcp?: readonly number[];
}

/** What the app answers to every HTTP request. */
export interface EchoReply {
  readonly app: string;
  readonly protocol: "h2" | "http/1.1";
  readonly method: string;
  readonly path: string;
  readonly authority: string | null;
  readonly xfcc: string | null;
}

const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

function reply(name: string, request: IncomingMessage | Http2ServerRequest, response: ServerResponse | Http2ServerResponse): void {
  const header = request.headers["x-forwarded-client-cert"];
  const body: EchoReply = {
    app: name,
    protocol: request.httpVersion === "2.0" ? "h2" : "http/1.1",
    method: request.method ?? "",
    path: request.url ?? "",
    authority: (request.headers[":authority"] as string | undefined) ?? request.headers.host ?? null,
    xfcc: Array.isArray(header) ? header.join(",") : (header ?? null),
  };
  response.writeHead(200, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/** One port for both protocols: the first bytes decide (the HTTP/2 preface, or anything else). */
export function httpEchoServer(name: string): Server {
  const h1 = createHttp1Server((req, res) => reply(name, req, res));
  const h2 = createHttp2Server((req, res) => reply(name, req, res));
  return createTcpServer((socket: Socket) => {
    socket.once("readable", function sniff() {
      const head: Buffer | null = socket.read(Math.min(H2_PREFACE.length, socket.readableLength || H2_PREFACE.length));
      if (head === null) return socket.once("readable", sniff);
      socket.unshift(head);
      (head.equals(H2_PREFACE.subarray(0, head.length)) ? h2 : h1).emit("connection", socket);
    });
  });
}

export function tcpEchoServer(): Server {
  return createTcpServer((socket) => {
    socket.on("error", () => {});
    socket.pipe(socket);
  });
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}

async function main(config: EchoAppConfig): Promise<void> {
  const ports = {
    http: await Promise.all((config.http ?? []).map((port) => listen(httpEchoServer(config.name), port, config.host))),
    tcp: await Promise.all((config.tcp ?? []).map((port) => listen(tcpEchoServer(), port, config.host))),
  };
  process.stdout.write(`listening ${JSON.stringify(ports)}\n`);
  process.on("SIGTERM", () => process.exit(0));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(JSON.parse(process.argv[2] ?? "{}") as EchoAppConfig).catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
