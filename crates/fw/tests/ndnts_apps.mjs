// NDNts programs (the TypeScript NDN library of browser and Node.js apps) for the forwarder's
// application tests (ndnts.rs), run with the packages scripts/setup.sh installs in .peers/ndnts.
//
//   produce <face> <prefix> <bytes>          registers <prefix> (NFD prefix registration:
//                                            /localhost/nfd over a Unix socket, /localhop/nfd
//                                            over a WebSocket) and serves an object of <bytes>
//                                            bytes as segments until killed
//   announce <face> <prefix> <bytes>         as produce, but registers with a prefix announcement
//                                            (rib/announce; NDNts's PrefixAnn, unsigned)
//   fetch <face> <prefix> <bytes>            fetches the object and prints "intact <bytes>" if
//                                            every byte is the producer's; <face> is a Unix
//                                            socket path, udp:<host>:<port>, ws://<host>:<port>
//                                            or mcast:<interface address>:<port> (NDNts's UDP
//                                            multicast face, group 224.0.23.170; a producer
//                                            there registers nothing: the LAN reaches it)
//   faces <unix-socket> <scheme>             prints the faces the forwarder's faces/query dataset
//                                            lists for URI scheme <scheme>, one URI a line
//   channels <unix-socket>                   prints the LocalUri of each of the forwarder's
//                                            listeners (faces/channels), one a line
//   cs <unix-socket> <prefix> <capacity>     as an operator: prints the cs/info dataset, erases
//                                            <prefix> from the content store (invokeCsErase:
//                                            cs/erase until it erases nothing), prints cs/info
//                                            again, sets the capacity and turns serving off
//                                            (cs/config), and prints cs/info once more
import { UnixTransport, UdpTransport } from "@ndn/node-transport";
import { WsTransport } from "@ndn/ws-transport";
import { ChannelStatus, CsFlags, CsInfo, enableNfdPrefixReg, FaceQuery, invoke, invokeCsErase, list, PrefixAnn } from "@ndn/nfdmgmt";
import { Name } from "@ndn/packet";
import { serve, fetch, BufferChunkSource } from "@ndn/segmented-object";

const [role, where, prefix, size] = process.argv.slice(2);
const object = Buffer.alloc(Number(size ?? 0)).map((_, i) => (i * 7 + (i >> 11)) & 0xff);

async function connect() {
  if (where.startsWith("ws://")) {
    return WsTransport.createFace({}, where);
  }
  if (where.startsWith("mcast:")) {
    const [, intf, port] = where.split(":");
    return UdpTransport.createMulticastFace({}, { intf, port: Number(port), multicastLoopback: true });
  }
  if (where.startsWith("udp:")) {
    const [, host, port] = where.split(":");
    return UdpTransport.createFace({}, host, Number(port));
  }
  return UnixTransport.createFace({}, where);
}

const face = await connect();
if (role === "produce") {
  if (!where.startsWith("mcast:")) {
    enableNfdPrefixReg(face);
  }
  serve(prefix, new BufferChunkSource(object));
} else if (role === "announce") {
  enableNfdPrefixReg(face, { PrefixAnn });
  const announcement = await PrefixAnn.build({ announced: new Name(prefix), expirationPeriod: 600_000 });
  serve(prefix, new BufferChunkSource(object), { pOpts: { announcement } });
} else if (role === "faces") {
  for (const f of await list(FaceQuery({ uriScheme: prefix }))) {
    console.log(f.uri);
  }
  face.close();
  process.exit(0);
} else if (role === "channels") {
  for (const c of await list(ChannelStatus)) {
    console.log(c.localUri);
  }
  face.close();
  process.exit(0);
} else if (role === "cs") {
  const info = async () => {
    const [i] = await list(CsInfo);
    return `entries=${i.nCsEntries} capacity=${i.capacity} admit=${i.flagEnableAdmit} serve=${i.flagEnableServe}`;
  };
  console.log(`before ${await info()}`);
  console.log(`erased ${await invokeCsErase(new Name(prefix))}`);
  console.log(`after ${await info()}`);
  // Serving off: its bit in Mask, not in Flags (NDNts passes Flags and Mask as given).
  const cr = await invoke("cs/config", { capacity: Number(size), flags: 0, mask: CsFlags.EnableServe });
  console.log(`config ${cr.statusCode}`);
  console.log(`configured ${await info()}`);
  face.close();
  process.exit(0);
} else {
  const got = Buffer.from(await fetch(prefix, { retxLimit: 10 }));
  console.log(got.equals(object) ? `intact ${got.length}` : `altered ${got.length}`);
  face.close();
  process.exit(got.equals(object) ? 0 : 1);
}
