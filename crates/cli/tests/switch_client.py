"""Drives one nexthop switch's control channel with Python's grpcio: a client nexthop did not
write, with stubs generated here from the repository's .proto (grpc_tools.protoc).

Usage: switch_client.py PROTO_ROOT ADDRESS H1_NS H2_NS H3_NS

The switch (learn = false) has ports s1, s2, s3 with hosts h1, h2, h3 (10.8.1.1-3, MACs
02:00:00:5d:01:0N) behind them, and an empty FIB. The script reads the switch, writes h1 and
h2, pings across, streams the packet-in h3's first frame makes, reads the counters, and checks
that bad writes and deltas are refused while forwarding goes on. It prints one JSON line.
"""

import json
import subprocess
import sys
import tempfile
import threading

from grpc_tools import protoc


def stubs(proto_root, out):
    proto = "nexthop/switch/v1/switch.proto"
    if protoc.main(["protoc", f"-I{proto_root}", f"--python_out={out}", f"--grpc_python_out={out}", proto]) != 0:
        sys.exit("protoc failed")
    sys.path.insert(0, out)
    from nexthop.switch.v1 import switch_pb2, switch_pb2_grpc

    return switch_pb2, switch_pb2_grpc


def ping(ns, to, count=3):
    cmd = ["ip", "netns", "exec", ns, "ping", "-c", str(count), "-i", "0.2", "-W", "2", to]
    return subprocess.run(cmd, capture_output=True, text=True).stdout


def mac(i):
    return bytes([0x02, 0, 0, 0x5D, 0x01, i])


def main():
    import grpc

    proto_root, address, h1, h2, h3 = sys.argv[1:6]
    pb, rpc = stubs(proto_root, tempfile.mkdtemp(prefix="nexthop-stubs-"))
    # Over a Unix socket grpcio sends the socket's path as :authority, which HTTP/2 servers
    # that check it (hyper, under tonic) refuse; name a host instead, as one does for UDS.
    channel = grpc.insecure_channel(address, options=[("grpc.default_authority", "localhost")])
    switch = rpc.SwitchStub(channel)
    out = {}

    info = switch.GetInfo(pb.GetInfoRequest(), timeout=5)
    out["ports"] = [p.name for p in info.ports]
    out["cell_bits"], out["port_bits"], out["checksum_bits"] = info.cell_bits, info.port_bits, info.checksum_bits

    seen = []
    got = threading.Event()
    stream = switch.StreamPacketIns(pb.StreamPacketInsRequest())

    def watch():
        try:
            for p in stream:
                seen.append((p.mac.hex(":"), p.port))
                if p.mac == mac(3):
                    got.set()
        except grpc.RpcError:
            pass

    threading.Thread(target=watch, daemon=True).start()

    written = switch.WriteEntries(
        pb.WriteEntriesRequest(entries=[pb.Entry(mac=mac(1), port=0), pb.Entry(mac=mac(2), port=1)]), timeout=5
    )
    out["hosts"], out["version"] = written.hosts, written.version
    out["h1_h2"] = " 0% packet loss" in ping(h1, "10.8.1.2")

    # h3 is not in the FIB: its first frame (an ARP request, flooded) is reported.
    ping(h3, "10.8.1.1", count=1)
    out["h3_reported"] = got.wait(5)
    out["packet_ins"] = seen

    refusals = {}

    def refused(name, call):
        try:
            call()
            refusals[name] = "accepted"
        except grpc.RpcError as e:
            refusals[name] = e.code().name

    refused("short_mac", lambda: switch.WriteEntries(pb.WriteEntriesRequest(entries=[pb.Entry(mac=b"\x02\x00", port=0)]), timeout=5))
    refused("no_such_port", lambda: switch.WriteEntries(pb.WriteEntriesRequest(entries=[pb.Entry(mac=mac(3), port=9)]), timeout=5))
    stale = pb.Patch(structure=info.structure, version=0, a=[pb.Cell(index=0, value=1)])
    refused("stale_patch", lambda: switch.PushDelta(pb.PushDeltaRequest(patch=stale), timeout=5))
    foreign = pb.Patch(structure=info.structure ^ 1, version=written.version, a=[pb.Cell(index=0, value=1)])
    refused("foreign_patch", lambda: switch.PushDelta(pb.PushDeltaRequest(patch=foreign), timeout=5))
    refused("corrupt_structure", lambda: switch.PushDelta(pb.PushDeltaRequest(structure=b"OTHQ\x02garbage"), timeout=5))
    refused("empty_delta", lambda: switch.PushDelta(pb.PushDeltaRequest(), timeout=5))
    out["refusals"] = refusals
    out["h2_h1_after"] = " 0% packet loss" in ping(h2, "10.8.1.1")

    counters = switch.ReadCounters(pb.ReadCountersRequest(), timeout=5)
    out["forwarded"] = counters.forwarded
    out["drops"] = {d.reason: d.frames for d in counters.drops}
    out["deltas_applied"], out["deltas_refused"] = counters.deltas_applied, counters.deltas_refused
    stream.cancel()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
