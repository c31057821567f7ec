// NDNts programs (the TypeScript NDN library of browser and Node.js apps) for the forwarder's
// application tests (ndnts.rs), run with the packages scripts/setup.sh installs in .peers/ndnts.
//
//   produce <face> <prefix> <bytes>          registers <prefix> (NFD prefix registration:
//                                            /localhost/nfd over a Unix socket, /localhop/nfd
//                                            over a WebSocket) and serves an object of <bytes>
//                                            bytes as segments until killed
//   fetch <face> <prefix> <bytes>            fetches the object and prints "intact <bytes>" if
//                                            every byte is the producer's; <face> is a Unix
//                                            socket path, udp:<host>:<port> or ws://<host>:<port>
//   faces <unix-socket> <scheme>             prints the faces the forwarder's faces/query dataset
//                                            lists for URI scheme <scheme>, one URI a line
import { UnixTransport, UdpTransport } from "@ndn/node-transport";
import { WsTransport } from "@ndn/ws-transport";
import { enableNfdPrefixReg, FaceQuery, list } from "@ndn/nfdmgmt";
import { serve, fetch, BufferChunkSource } from "@ndn/segmented-object";

const [role, where, prefix, size] = process.argv.slice(2);
const object = Buffer.alloc(Number(size)).map((_, i) => (i * 7 + (i >> 11)) & 0xff);

async function connect() {
  if (where.startsWith("ws://")) {
    return WsTransport.createFace({}, where);
  }
  if (where.startsWith("udp:")) {
    const [, host, port] = where.split(":");
    return UdpTransport.createFace({}, host, Number(port));
  }
  return UnixTransport.createFace({}, where);
}

const face = await connect();
if (role === "produce") {
  enableNfdPrefixReg(face);
  serve(prefix, new BufferChunkSource(object));
} else if (role === "faces") {
  for (const f of await list(FaceQuery({ uriScheme: prefix }))) {
    console.log(f.uri);
  }
  face.close();
  process.exit(0);
} else {
  const got = Buffer.from(await fetch(prefix, { retxLimit: 10 }));
  console.log(got.equals(object) ? `intact ${got.length}` : `altered ${got.length}`);
  face.close();
  process.exit(got.equals(object) ? 0 : 1);
}
