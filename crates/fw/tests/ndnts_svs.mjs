// A participant of an NDNts StateVectorSync group (@ndn/svs, the sync protocol of NDN's chat and
// workspace apps), for the forwarder's application tests (ndnts.rs):
//
//   ndnts_svs.mjs <unix-socket> <group> <own name> <participants> <rounds>
//
// It registers <own name> (NFD prefix registration) and serves "<own name> says <n>" as Data
// <own name>/<n>; joins the sync group <group> (which it registers too: its sync Interests go to
// every other participant only where the forwarder multicasts them); publishes sequence numbers
// 1..<rounds>, one each 300 ms; and for each update the group brings, fetches the new Data from
// the participant that published it and checks it. Once it has every sequence number of every
// other participant it prints "SYNCED <participants - 1> peers <rounds> each", and goes on
// serving until killed. Data that is not what its publisher wrote: "WRONG ...", exit 1. Each update
// it hears goes to stderr, for the test's failure message.
import { UnixTransport } from "@ndn/node-transport";
import { enableNfdPrefixReg } from "@ndn/nfdmgmt";
import { consume, produce } from "@ndn/endpoint";
import { Data, Name } from "@ndn/packet";
import { SvSync } from "@ndn/svs";

const [where, group, own, participants, rounds] = process.argv.slice(2);
const face = await UnixTransport.createFace({}, where);
enableNfdPrefixReg(face);
const me = new Name(own);
const [peers, want] = [Number(participants) - 1, Number(rounds)];

produce(me, async (interest) => {
  const n = interest.name.at(me.length).text;
  return new Data(interest.name, new TextEncoder().encode(`${own} says ${n}`));
}, { announcement: me });

// Sync Interests every 2 s (±10%), not SVS's default 30 s: a participant that joins after
// another has published its last update (node starts slowly on a loaded machine) otherwise hears
// of it only from that participant's next periodic sync Interest — a peer answers an outdated
// vector at once only if its own news is over 2.2 s old (SVS's suppression period).
const sync = await SvSync.create({ syncPrefix: new Name(group), describe: own, periodicTimeout: 2000 });
const node = sync.add(me);
const fetched = new Map(); // publisher (hex) -> Data fetched
let synced = false;
sync.addEventListener("update", async (update) => {
  const peer = update.id.name;
  console.error(`update ${peer} ${update.loSeqNum}..${update.hiSeqNum}`);
  for (const n of update.seqNums()) {
    const data = await consume(peer.append(`${n}`), { retx: 5 });
    const [who, says, seq] = new TextDecoder().decode(data.content).split(" ");
    if (!new Name(who).equals(peer) || says !== "says" || seq !== `${n}`) {
      console.log(`WRONG ${data.name} ${who} ${says} ${seq}`);
      process.exit(1);
    }
    fetched.set(peer.valueHex, (fetched.get(peer.valueHex) ?? 0) + 1);
  }
  if (!synced && fetched.size === peers && [...fetched.values()].every((count) => count === want)) {
    synced = true;
    console.log(`SYNCED ${peers} peers ${want} each`);
  }
});

const publish = setInterval(() => {
  if (node.seqNum < want) {
    node.seqNum++;
  } else {
    clearInterval(publish);
  }
}, 300);
