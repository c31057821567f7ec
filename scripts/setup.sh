#!/usr/bin/env bash
# Installs what nexthop's build, tests and experiments need on a fresh machine.
# Idempotent: each step checks first. Called by `make` targets; safe to run by hand.
set -euo pipefail

# Rust toolchain components used by `make test` (rustfmt, clippy).
if command -v rustup >/dev/null; then
  for c in rustfmt clippy; do
    rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c"
  done
fi
command -v cargo >/dev/null || { echo "cargo not found: install Rust (rustup) first" >&2; exit 1; }

# python-ndn: the NDN library real applications use, in a virtual environment at .venv (the
# wire interop tests and the forwarder's application tests run it, and its pyndnsec tool).
VENV="$(cd "$(dirname "$0")/.." && pwd)/.venv"
if ! "$VENV/bin/python" -c "import ndn.encoding" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check 'python-ndn==0.5.2'
fi

# ndn-python-repo, the NDN repository people run on python-ndn, in the same .venv: the
# forwarder's tests run it and its own clients unmodified (crates/fw/tests/python_repo.rs).
if ! "$VENV/bin/python" -c "import ndn_python_repo.cmd.main" 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check 'ndn-python-repo==0.3' 'setuptools<81'
fi

# Real router topologies for the tagnet experiment's locators: the CAIDA per-AS topologies (and
# Topology Zoo, SNDlib) that the PyPI package topohub ships as JSON, in the same .venv.
if ! "$VENV/bin/python" -c "import topohub" 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check 'topohub==1.5.1'
fi

# grpcio and its code generator: a gRPC client nexthop did not write, which the switch's tests
# drive its control channel with (crates/cli/tests/switch_client.py), in a virtual environment
# of its own, .venv-grpc: grpcio-tools needs a setuptools without the pkg_resources that
# ndn-python-repo imports.
GRPC_VENV="$(cd "$(dirname "$0")/.." && pwd)/.venv-grpc"
if ! "$GRPC_VENV/bin/python" -c "import grpc, grpc_tools.protoc" 2>/dev/null; then
  python3 -m venv "$GRPC_VENV"
  "$GRPC_VENV/bin/python" -m pip install --quiet --disable-pip-version-check 'grpcio==1.85.1' 'grpcio-tools==1.85.1'
fi

# Real URL names for the name-fib experiment's `url` FIB: the filter lists (EasyList,
# EasyPrivacy, URLhaus, uBlock) that Debian's uBlock Origin package ships.
UBLOCK_ASSETS='/usr/share/mozilla/extensions/{ec8030f7-c20a-464f-9b0e-13a3a9e97384}/uBlock0@raymondhill.net/assets'
if [ ! -f "$UBLOCK_ASSETS/thirdparties/easylist/easylist.txt" ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends webext-ublock-origin-firefox >/dev/null
fi

# Real BGP tables for the ip-lpm experiment: RouteViews-derived IPv4 (2014, 2015) and IPv6 (2015)
# tables that Debian's pyasn package ships under /usr/lib/python3/dist-packages/data.
if [ ! -f /usr/lib/python3/dist-packages/data/ipasn_20140513.dat.gz ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-pyasn >/dev/null
fi

# iproute2's `ip`, with which the Ethernet face tests make a veth pair (crates/fw/tests/multicast.rs).
if ! command -v ip >/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends iproute2 >/dev/null
fi

# The real hosts and routing daemon of the IP router's tests (crates/router/tests): ping,
# traceroute, iperf3, BIRD 2 announcing routes into the kernel's table, and ethtool (a veth
# end standing for a host's NIC computes its checksums itself, as a NIC would on the wire).
for pair in ping:iputils-ping traceroute:traceroute iperf3:iperf3 bird:bird2 ethtool:ethtool; do
  if ! command -v "${pair%%:*}" >/dev/null && [ ! -x "/usr/sbin/${pair%%:*}" ]; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${pair#*:}" >/dev/null
  fi
done

# NDNts, the TypeScript NDN library of browser and Node.js apps: its Node.js and WebSocket
# transports, NFD prefix registration, segmented objects and StateVectorSync, from npm into .peers/ndnts, for the forwarder's
# application tests (crates/fw/tests/ndnts.rs). Node.js and npm come from Debian if missing.
NDNTS_VERSION=0.0.20250307
NDNTS="$(cd "$(dirname "$0")/.." && pwd)/.peers/ndnts"
if [ ! -f "$NDNTS/node_modules/@ndn/svs/package.json" ]; then
  if ! command -v npm >/dev/null; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  mkdir -p "$NDNTS"
  echo '{"name": "nexthop-ndnts", "private": true, "type": "module"}' > "$NDNTS/package.json"
  (cd "$NDNTS" && npm install --silent --no-audit --no-fund \
    "@ndn/node-transport@$NDNTS_VERSION" "@ndn/ws-transport@$NDNTS_VERSION" "@ndn/nfdmgmt@$NDNTS_VERSION" \
    "@ndn/segmented-object@$NDNTS_VERSION" "@ndn/endpoint@$NDNTS_VERSION" "@ndn/packet@$NDNTS_VERSION" \
    "@ndn/svs@$NDNTS_VERSION")
fi

# NDNd, the Go NDN forwarder, as the `forwarder` experiment's peer: built from its release
# module (fetched through the Go module proxy) into .peers/. Go is a prerequisite here; without
# it the step says so and the experiment refuses to run without its peer.
NDND_VERSION=v1.5.3
NDND="$(cd "$(dirname "$0")/.." && pwd)/.peers/ndnd-$NDND_VERSION/ndnd"
if [ ! -x "$NDND" ]; then
  GO="$(command -v go || echo /usr/local/go/bin/go)"
  if [ -x "$GO" ]; then
    GOMODCACHE="$("$GO" env GOMODCACHE)"
    mkdir -p "$(dirname "$NDND")"
    TMPMOD="$(mktemp -d)"
    # Download the module itself, then build its cmd/ndnd inside it (go install @version would
    # ask the proxy for the version list, which it refuses here).
    (cd "$TMPMOD" && "$GO" mod init peers >/dev/null 2>&1 && "$GO" mod download "github.com/named-data/ndnd@$NDND_VERSION")
    (cd "$GOMODCACHE/github.com/named-data/ndnd@$NDND_VERSION" && "$GO" build -o "$NDND" ./cmd/ndnd)
    rm -rf "$TMPMOD"
  else
    echo "setup: Go not found; the forwarder experiment's NDNd peer is not built" >&2
  fi
fi
