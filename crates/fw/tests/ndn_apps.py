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
A producer answers NAME with content "hello <NAME>", except names under PREFIX/big, which are
the segments of a BIG_BYTES-byte object (byte i = i*7 mod 251) of 8000-byte segments. It prints
"READY" once its prefix is registered.
"""
import asyncio
import hashlib
import sys

from ndn import appv2, types
from ndn.app import NDNApp
from ndn.app_support.nfd_mgmt import FaceEventNotification
from ndn.app_support.segment_fetcher import segment_fetcher
from ndn.encoding import Component, Name

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
    elif cmd == 'face-events':
        face_events(int(args[0]))
    else:
        sys.exit(f'unknown command {cmd}')
