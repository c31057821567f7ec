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


def half_a_delta(path, structure):
    """A client that goes away mid-delta: HTTP/2 by hand on the switch's Unix socket, a
    PushDelta whose gRPC message says it has all of `structure` but stops halfway, then the
    connection closed."""
    import socket
    import struct

    def frame(kind, flags, stream, payload):
        return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload

    def literal(name, value):  # HPACK: a literal header, not indexed, no Huffman
        return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value

    headers = b"".join(
        literal(n, v)
        for n, v in [
            (b":method", b"POST"),
            (b":scheme", b"http"),
            (b":path", b"/nexthop.switch.v1.Switch/PushDelta"),
            (b":authority", b"localhost"),
            (b"content-type", b"application/grpc"),
            (b"te", b"trailers"),
        ]
    )
    size = len(structure)
    varint = bytearray()
    while True:
        varint.append((size & 0x7F) | (0x80 if size > 0x7F else 0))
        size >>= 7
        if not size:
            break
    message = b"\x12" + bytes(varint) + structure  # PushDeltaRequest.structure
    grpc_message = b"\x00" + struct.pack(">I", len(message)) + message
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"") + frame(1, 4, 1, headers))
    sock.sendall(frame(0, 0, 1, grpc_message[: len(grpc_message) // 2]))
    sock.close()


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

    # A delta cut short by its client's going away changes nothing; the switch answers on.
    before = switch.GetInfo(pb.GetInfoRequest(), timeout=5)
    half_a_delta(address[len("unix:"):], bytes(range(256)) * 64)
    after = switch.GetInfo(pb.GetInfoRequest(), timeout=5)
    out["cut_short_changed_nothing"] = (before.structure, before.version) == (after.structure, after.version)
    out["h2_h1_after"] = " 0% packet loss" in ping(h2, "10.8.1.1")

    counters = switch.ReadCounters(pb.ReadCountersRequest(), timeout=5)
    out["forwarded"] = counters.forwarded
    out["drops"] = {d.reason: d.frames for d in counters.drops}
    out["deltas_applied"], out["deltas_refused"] = counters.deltas_applied, counters.deltas_refused
    stream.cancel()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
