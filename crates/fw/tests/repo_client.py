"""ndn-python-repo's own clients, unmodified, as one command each (crates/fw/tests/python_repo.rs).

    repo_client.py put <repo> <client prefix> <file> <name>   -> INSERTED <segments>
    repo_client.py get <repo> <name> <out file>              -> FETCHED <bytes> | FAILED
    repo_client.py delete <repo> <client prefix> <name>      -> DELETED <segments>

The forwarder is the one NDN_CLIENT_TRANSPORT names; the keychain is $HOME's (python-ndn's).
"""

import asyncio
import os
import sys

from ndn.app import NDNApp
from ndn.encoding import Name
from ndn_python_repo.clients import DeleteClient, GetfileClient, PutfileClient


async def put(app, repo, client, path, name):
    put = PutfileClient(app, Name.from_str(client), Name.from_str(repo))
    n = await put.insert_file(path, Name.from_str(name), segment_size=4000, freshness_period=0, cpu_count=1)
    print(f"INSERTED {n}")


async def get(app, repo, name, out):
    get = GetfileClient(app, Name.from_str(repo))
    await get.fetch_file(Name.from_str(name), local_filename=out, overwrite=True)
    print(f"FETCHED {os.path.getsize(out)}" if os.path.isfile(out) else "FAILED")


async def delete(app, repo, client, name):
    delete = DeleteClient(app, Name.from_str(client), Name.from_str(repo))
    n = await delete.delete_file(Name.from_str(name))
    print(f"DELETED {n}")


def main():
    command, args = sys.argv[1], sys.argv[2:]
    app = NDNApp()
    run = {"put": put, "get": get, "delete": delete}[command]

    async def once():
        try:
            await run(app, *args)
        finally:
            sys.stdout.flush()
            app.shutdown()

    app.run_forever(after_start=once())


if __name__ == "__main__":
    main()
