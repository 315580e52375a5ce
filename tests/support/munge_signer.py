"""Sign message bodies with auth/munge as another user: ``python munge_signer.py UID GID
SLURM_CONF``, then one base64 body a line on stdin, one base64 credential (or ``ERROR
text``) a line on stdout.

It starts as root, loads the configured auth plugin (libmunge, the configuration), then
drops to the user for good: munged takes the uid and gid a credential carries from its
socket's peer, so the credentials speak for that user, as a command run by them would.
One process signs every body a test sends (a process per message would spend the test
starting Python)."""

from __future__ import annotations

import base64
import os
import pwd
import sys


def main() -> int:
    uid, gid, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    from plurm import conf
    from plurm.live.rpc import RpcError, Signer
    from plurm.manager import Plugins

    signer = Signer(Plugins.load(conf.load(path), roles=("auth",)))
    user = pwd.getpwuid(uid).pw_name
    os.setgroups(os.getgrouplist(user, gid))
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    for line in sys.stdin:
        try:
            answer = signer.sign(base64.b64decode(line.strip()))
        except RpcError as error:
            answer = f"ERROR {error.message}"
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
