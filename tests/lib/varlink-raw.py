#!/usr/bin/env python3
"""Raw socket probes for sunkd's Varlink endpoint (integration tests).

Usage: varlink-raw.py SOCKET MODE [ARG...]
Prints one line describing what the daemon did, for the shell test to check.
"""
import json
import socket
import sys
import threading
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # Long enough for a loaded machine; a reply this late is a hang.
    s.settimeout(30)
    s.connect(path)
    return s


_pending = {}


def read_reply(s):
    """One NUL-terminated reply; bytes of the next one stay buffered for the
    next call (the daemon may answer pipelined requests in one write)."""
    buf = _pending.pop(s.fileno(), b"")
    while b"\0" not in buf:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return "timeout"
        except ConnectionResetError:
            return "reset"
        if not chunk:
            return "closed" if not buf else "partial"
        buf += chunk
    msg, _, rest = buf.partition(b"\0")
    if rest:
        _pending[s.fileno()] = rest
    return json.loads(msg.decode())


def closed_after(s):
    # Shorter than any idle timeout the tests configure.
    s.settimeout(0.5)
    try:
        data = s.recv(1)
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    return data == b""


def send_all_quietly(s, payload):
    """What a peer does that goes on writing while the daemon, past a
    limit, has answered and closed: the rest is refused by the kernel."""
    try:
        s.sendall(payload)
    except (BrokenPipeError, ConnectionResetError):
        pass


def call(path, payload):
    s = connect(path)
    if len(payload) > 1 << 20:
        # more than the socket buffers hold: read the answer while sending
        sender = threading.Thread(target=send_all_quietly, args=(s, payload))
        sender.start()
        reply = read_reply(s)
        sender.join()
        if isinstance(reply, dict):
            return "%s closed=%s" % (reply.get("error", "ok"), closed_after(s))
        return reply
    s.sendall(payload)
    reply = read_reply(s)
    if isinstance(reply, dict):
        closed = closed_after(s)
        return "%s closed=%s" % (reply.get("error", "ok"), closed)
    return reply


def main():
    path, mode = sys.argv[1], sys.argv[2]
    arg = sys.argv[3] if len(sys.argv) > 3 else None
    if mode == "raw":
        print(call(path, arg.encode().decode("unicode_escape").encode("latin-1")))
    elif mode == "oversize":
        n = int(arg)
        body = b'{"method":"io.sunkd.Agent.Ping","parameters":{"pad":"' + b"x" * n + b'"}}\0'
        print(call(path, body))
    elif mode == "deep":
        n = int(arg)
        body = b'{"method":"io.sunkd.Agent.Ping","parameters":{"a":' + b"[" * n + b"]" * n + b"}}\0"
        print(call(path, body))
    elif mode == "truncated":
        s = connect(path)
        s.sendall(b'{"method":"io.sunkd.Agent.Pi')
        s.shutdown(socket.SHUT_WR)
        r = read_reply(s)
        if isinstance(r, dict):
            r = "%s %s closed=%s" % (r.get("error"), r.get("parameters", {}).get("reason"), closed_after(s))
        print(r)
    elif mode == "silent":
        s = connect(path)
        t = time.monotonic()
        r = read_reply(s)
        print("%s after %.1fs" % (r, time.monotonic() - t))
    elif mode == "pipelined":
        s = connect(path)
        s.sendall(b'{"method":"io.sunkd.Agent.Ping"}\0{"method":"io.sunkd.Agent.Version"}\0')
        a = read_reply(s)
        b = read_reply(s)
        print("ping=%s version=%s" % ("error" not in a, b.get("parameters", {}).get("version")))
    elif mode == "many":
        n = int(arg)
        socks = []
        for _ in range(n):
            try:
                socks.append(connect(path))
            except OSError:
                break
        for s in socks:
            try:
                s.sendall(b'{"method":"io.sunkd.Agent.Ping"}\0')
            except OSError:
                pass
        # "refused" is a clean refusal (an error reply, or the connection
        # closed or reset); a client left waiting is "hanging", never refused.
        answered = refused = hanging = 0
        for s in socks:
            r = read_reply(s)
            if isinstance(r, dict) and "error" not in r:
                answered += 1
            elif r in ("closed", "reset") or isinstance(r, dict):
                refused += 1
            else:
                hanging += 1
            s.close()
        print("connected=%d answered=%d refused=%d hanging=%d" % (len(socks), answered, refused, hanging))
    elif mode == "call":
        method, params = arg, sys.argv[4] if len(sys.argv) > 4 else "{}"
        msg = json.dumps({"method": method, "parameters": json.loads(params)}).encode() + b"\0"
        s = connect(path)
        s.sendall(msg)
        print(json.dumps(read_reply(s), sort_keys=True))
    elif mode == "repeat":
        # N calls, one after another on one connection, from one process.
        n, method = int(arg), sys.argv[4]
        params = sys.argv[5] if len(sys.argv) > 5 else "{}"
        msg = json.dumps({"method": method, "parameters": json.loads(params)}).encode() + b"\0"
        s = connect(path)
        answered = errors = 0
        for _ in range(n):
            s.sendall(msg)
            r = read_reply(s)
            if isinstance(r, dict) and "error" not in r:
                answered += 1
            else:
                errors += 1
        print("answered=%d errors=%d" % (answered, errors))
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
