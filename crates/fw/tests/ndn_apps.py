"""Unmodified python-ndn applications that the forwarder tests run against nexthop.

Subcommands (the transport comes from NDN_CLIENT_TRANSPORT, the keychain from HOME/.ndn):
  produce-v2 PREFIX     appv2 producer (the current API)
  produce-v1 PREFIX     NDNApp producer (the older API)
  consume-v2 NAME [prefix]   appv2 consumer: prints "DATA <name> <content>", "NACK <reason>" or "TIMEOUT"
  consume-v1 NAME [prefix]   NDNApp consumer, same output
  fetch-v1 NAME         NDNApp segment fetcher: prints "FETCHED <bytes> <sha256>"
  face-events N         follows NFD's face event stream (/localhost/nfd/faces/events, as ndn-cxx's
                        FaceMonitor does) for N notifications, decoded with python-ndn's
                        FaceEventNotification: prints "SUBSCRIBED", then "EVENT <seq> <kind> <face id>
                        <uri>" for each
  command FORM MODULE VERB PREFIX [FACE]
                        sends the management command MODULE/VERB for PREFIX (with FaceId FACE),
                        FORM being v03 (a signed Interest by the keychain's default key, with
                        SignatureTime and SignatureNonce as ndn-cxx's command signer adds), v02
                        (the older signed name: timestamp, nonce, SignatureInfo, SignatureValue
                        components, by the same key) or digest (python-ndn's own make_command,
                        DigestSha256); prints "STATUS <code>", or "TIMEOUT" when not answered
  localhop-register FORM PREFIX [CERT-FILE]
                        registers PREFIX one hop away (/localhop/nfd/rib/register), the command
                        signed as `command` signs (FORM v03 or digest), while answering Interests
                        for the certificate in CERT-FILE (base64, as pyndnsec writes it), which
                        the forwarder fetches to validate the signer; prints "STATUS <code>" or
                        "TIMEOUT"
A producer answers NAME with content "hello <NAME>", except names under PREFIX/big, which are
the segments of a BIG_BYTES-byte object (byte i = i*7 mod 251) of 8000-byte segments. It prints
"READY" once its prefix is registered.
"""
import asyncio
import base64
import hashlib
import os
import struct
import sys
import time

from ndn import appv2, types
from ndn.app import NDNApp
from ndn.app_support.nfd_mgmt import ControlResponse, FaceEventNotification, make_command, make_command_v2
from ndn.app_support.segment_fetcher import segment_fetcher
from ndn.encoding import (Component, Name, SignatureInfo, TypeNumber, get_tl_num_size, parse_and_check_tl, parse_data,
                          write_tl_num)

BIG_BYTES = 3 * 1024 * 1024 + 12345
SEG = 8000


def big_object():
    return bytes((i * 7) % 251 for i in range(BIG_BYTES))


def answer(prefix, name, blob):
    """(data name, content, final_block_id) for an Interest name; the object's own name (a
    CanBePrefix Interest) is answered with segment 0."""
    big = Name.normalize(prefix) + [Component.from_str('big')]
    if name == big:
        name = name + [Component.from_segment(0)]
    if Name.is_prefix(big, name) and len(name) == len(big) + 1 and Component.get_type(name[-1]) == Component.TYPE_SEGMENT:
        seg = Component.to_number(name[-1])
        last = (len(blob) - 1) // SEG
        if seg > last:
            return name, None, None
        return name, blob[seg * SEG:(seg + 1) * SEG], Component.from_segment(last)
    return name, ('hello ' + Name.to_str(name)).encode(), None


def produce_v2(prefix):
    app = appv2.NDNApp()
    keychain = app.default_keychain()
    signer = keychain.get_signer({})
    blob = big_object()

    @app.route(prefix)
    def on_interest(name, _param, reply, _context):
        name, content, final = answer(prefix, name, blob)
        if content is None:
            return
        kw = {'freshness_period': 10000}
        if final is not None:
            kw['final_block_id'] = final
        reply(app.make_data(name, content=content, signer=signer, **kw))

    async def ready():
        await asyncio.sleep(0.5)
        print('READY', flush=True)

    app.run_forever(after_start=ready())


def produce_v1(prefix):
    app = NDNApp()
    blob = big_object()

    @app.route(prefix)
    def on_interest(name, _param, _app_param):
        name, content, final = answer(prefix, name, blob)
        if content is None:
            return
        kw = {'freshness_period': 10000}
        if final is not None:
            kw['final_block_id'] = final
        app.put_data(name, content=content, **kw)

    async def ready():
        await asyncio.sleep(0.5)
        print('READY', flush=True)

    app.run_forever(after_start=ready())


def consume_v2(name, prefix):
    app = appv2.NDNApp()

    async def main():
        try:
            data_name, content, _ = await app.express(name, validator=appv2.pass_all, can_be_prefix=prefix, must_be_fresh=prefix, lifetime=2000)
            print('DATA', Name.to_str(data_name), bytes(content).decode(), flush=True)
        except types.InterestNack as e:
            print('NACK', e.reason, flush=True)
        except types.InterestTimeout:
            print('TIMEOUT', flush=True)
        finally:
            app.shutdown()

    app.run_forever(after_start=main())


def consume_v1(name, prefix):
    app = NDNApp()

    async def main():
        try:
            data_name, _meta, content = await app.express_interest(name, can_be_prefix=prefix, must_be_fresh=prefix, lifetime=2000)
            print('DATA', Name.to_str(data_name), bytes(content).decode(), flush=True)
        except types.InterestNack as e:
            print('NACK', e.reason, flush=True)
        except types.InterestTimeout:
            print('TIMEOUT', flush=True)
        finally:
            app.shutdown()

    app.run_forever(after_start=main())


def fetch_v1(name):
    app = NDNApp()

    async def main():
        try:
            h = hashlib.sha256()
            n = 0
            async for seg in segment_fetcher(app, name, timeout=2000, retry_times=5):
                h.update(bytes(seg))
                n += len(seg)
            print('FETCHED', n, h.hexdigest(), flush=True)
        except (types.InterestNack, types.InterestTimeout) as e:
            print('FAILED', type(e).__name__, flush=True)
        finally:
            app.shutdown()

    app.run_forever(after_start=main())


def face_events(count):
    app = appv2.NDNApp()
    stream = Name.from_str('/localhost/nfd/faces/events')

    async def main():
        try:
            # The subscriber's first Interest: the stream's name, CanBePrefix and MustBeFresh;
            # then each next sequence number by name.
            print('SUBSCRIBED', flush=True)
            name, seq = stream, None
            for _ in range(count):
                prefix = seq is None
                data_name, content, _ = await app.express(name, validator=appv2.pass_all, can_be_prefix=prefix, must_be_fresh=prefix, lifetime=10000)
                seq = Component.to_number(data_name[-1])
                event = FaceEventNotification.parse(content).event
                kind = event.face_event_kind
                print('EVENT', seq, getattr(kind, 'value', kind), event.face_id, event.uri, flush=True)
                name = stream + [Component.from_sequence_num(seq + 1)]
        except (types.InterestNack, types.InterestTimeout) as e:
            print('FAILED', type(e).__name__, flush=True)
        finally:
            app.shutdown()

    app.run_forever(after_start=main())


class CommandSigner:
    """The keychain's signer, adding SignatureTime and SignatureNonce to the signature info (what
    ndn-cxx's command Interest signer adds, and NFD's command policy requires)."""

    def __init__(self, inner):
        self.inner = inner

    def write_signature_info(self, signature_info):
        self.inner.write_signature_info(signature_info)
        signature_info.signature_time = int(time.time() * 1000)
        signature_info.signature_nonce = int.from_bytes(os.urandom(8), 'big')

    def get_signature_value_size(self):
        return self.inner.get_signature_value_size()

    def write_signature_value(self, wire, contents):
        return self.inner.write_signature_value(wire, contents)


def tlv(typ, value):
    buf = bytearray(get_tl_num_size(typ) + get_tl_num_size(len(value)))
    write_tl_num(len(value), buf, write_tl_num(typ, buf))
    return bytes(buf) + bytes(value)


def signed_name(module, verb, signer, scope, **params):
    """The older signed command name (as python-ndn's make_command, but signed by `signer`)."""
    name = make_command_v2(module, verb, **params)
    name[0] = Component.from_str(scope)
    name.append(Component.from_bytes(struct.pack('!Q', int(time.time() * 1000))))
    name.append(Component.from_bytes(os.urandom(8)))
    info = SignatureInfo()
    signer.write_signature_info(info)
    name.append(Component.from_bytes(tlv(TypeNumber.SIGNATURE_INFO, info.encode())))
    value = bytearray(signer.get_signature_value_size())
    length = signer.write_signature_value(value, name)
    name.append(Component.from_bytes(tlv(TypeNumber.SIGNATURE_VALUE, value[:length])))
    return name


def command(form, module, verb, prefix, face, scope='localhost', cert_file=None, lifetime=1000):
    """Sends one command under /<scope>/nfd, answering for the certificate in `cert_file` if any."""
    app = NDNApp()
    params = {'name': prefix}
    if face is not None:
        params['face_id'] = face
    if cert_file is not None:
        with open(cert_file) as f:
            cert = base64.standard_b64decode(''.join(f.read().split()))
        cert_name = parse_data(cert)[0]
        # /<identity>/KEY/<key id>: what a KeyLocator names, asked for with CanBePrefix.
        app.set_interest_filter(cert_name[:-2], lambda name, _param, _app_param: app.put_raw_packet(cert))

    async def main():
        try:
            signer = app.keychain.get_signer({})
            if form == 'v03':
                name = make_command_v2(module, verb, **params)
                name[0] = Component.from_str(scope)
                _, _, reply = await app.express_interest(name, app_param=b'', signer=CommandSigner(signer), lifetime=lifetime)
            elif form == 'v02':
                _, _, reply = await app.express_interest(signed_name(module, verb, signer, scope, **params), lifetime=lifetime)
            else:
                name = make_command(module, verb, **params)
                name[0] = Component.from_str(scope)  # (its digest is not checked: unsigned either way)
                _, _, reply = await app.express_interest(name, lifetime=lifetime)
            # (python-ndn's parse_response fails on an answer without ControlParameters, as
            # NFD's refusals are.)
            print('STATUS', ControlResponse.parse(parse_and_check_tl(memoryview(reply), 0x65)).status_code)
        except types.InterestTimeout:
            print('TIMEOUT')
        finally:
            app.shutdown()

    app.run_forever(after_start=main())


def serve_cert(cert_file):
    """Answers for the certificate in `cert_file` (base64) under its key's name: a certificate
    repository on the network."""
    app = NDNApp()
    with open(cert_file) as f:
        cert = base64.standard_b64decode(''.join(f.read().split()))
    key_name = parse_data(cert)[0][:-2]

    @app.route(key_name)
    def on_interest(_name, _param, _app_param):
        app.put_raw_packet(cert)

    async def ready():
        await asyncio.sleep(0.5)
        print('READY', flush=True)

    app.run_forever(after_start=ready())


if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'big-sha256':
        blob = big_object()
        print(len(blob), hashlib.sha256(blob).hexdigest())
    elif cmd == 'produce-v2':
        produce_v2(args[0])
    elif cmd == 'produce-v1':
        produce_v1(args[0])
    elif cmd == 'consume-v2':
        consume_v2(args[0], len(args) > 1)
    elif cmd == 'consume-v1':
        consume_v1(args[0], len(args) > 1)
    elif cmd == 'fetch-v1':
        fetch_v1(args[0])
    elif cmd == 'command':
        command(args[0], args[1], args[2], args[3], int(args[4]) if len(args) > 4 else None)
    elif cmd == 'localhop-register':
        command(args[0], 'rib', 'register', args[1], None, 'localhop', args[2] if len(args) > 2 else None, 8000)
    elif cmd == 'serve-cert':
        serve_cert(args[0])
    elif cmd == 'face-events':
        face_events(int(args[0]))
    else:
        sys.exit(f'unknown command {cmd}')
