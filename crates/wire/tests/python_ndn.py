"""Interop vectors with python-ndn, the NDN library real applications use.

  python_ndn.py make            print packets python-ndn encodes, one "KIND HEX" per line
  python_ndn.py parse KIND HEX  parse a packet nexthop encoded and print what python-ndn read
"""
import sys

from ndn.encoding import InterestParam, MetaInfo, Name, make_data, make_interest, parse_data, parse_interest
from ndn.security import DigestSha256Signer


def make():
    name = Name.from_str("/example/testApp/randomData/v=5/seg=3")
    plain = make_interest(name, InterestParam(can_be_prefix=True, must_be_fresh=True, nonce=0x01020304, lifetime=2000, hop_limit=30))
    params = make_interest(name, InterestParam(nonce=0x0a0b0c0d, lifetime=4000), app_param=b"hello")
    signed = make_interest(name, InterestParam(nonce=7), app_param=b"cmd", signer=DigestSha256Signer(for_interest=True))
    data = make_data(Name.from_str("/example/testApp/randomData"), MetaInfo(freshness_period=1000), b"Hello, world!", signer=DigestSha256Signer())
    for kind, packet in [("interest", plain), ("interest-params", params), ("interest-signed", signed), ("data", data)]:
        print(kind, bytes(packet).hex())


def parse(kind, hexstr):
    wire = bytes.fromhex(hexstr)
    if kind == "interest":
        name, param, app_param, sig = parse_interest(wire)
        print(Name.to_str(name), int(bool(param.can_be_prefix)), int(bool(param.must_be_fresh)), param.nonce, param.lifetime, param.hop_limit, bytes(app_param or b"").hex())
    else:
        name, meta, content, sig = parse_data(wire)
        print(Name.to_str(name), meta.freshness_period, bytes(content or b"").decode(), sig.signature_info.signature_type)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make()
    else:
        parse(sys.argv[2], sys.argv[3])
