#!/usr/bin/env python3
"""SCIM 2.0 fixture server for sunkd tests (python3 stdlib only).

Serves <prefix>/Users and <prefix>/Groups as ListResponse pages from a JSON
data set ({"Users": [...], "Groups": [...]}) or a generated one, on
127.0.0.1.  Requires "Authorization: Bearer <token>".  Every request line
(path and query) is appended to --log so tests can count requests.

Fault modes (--fault): 500 (the first --fault-count requests fail), 401,
slow (every response waits --delay seconds), truncate (the --fault-page-th
request gets a truncated JSON body), garbage (same, a non-JSON body), empty
(same, an empty 200 body), shrink (only the first --shrink users and
groups), refused (hold a port that is bound but never listens).
Request-storm modes: storm (ignore startIndex, leave it out of the reply and
claim --claim-total results), dwindle (honour startIndex, but every page
after a kind's first holds one resource).  busy: the first --fault-count
requests get --busy-status (429) with "Retry-After: --retry-after"
("date+N" sends the HTTP-date N seconds from now).  overclaim: every
page claims 5 more results than there are.  --prerender
renders every resource before the port file appears, so that the first
fetch is as fast as the next (the benchmark times it).

Pagination (--pagination): index (startIndex only; /ServiceProviderConfig is
404, as on servers that predate RFC 9865), cursor (advertises RFC 9865
cursors there and pages by cursor when asked with a cursor parameter, by
index otherwise), cursor-only (no /ServiceProviderConfig; every listing is
paged by cursor, startIndex is ignored).  Cursor faults: cursor-loop (every
nextCursor names the first page), cursor-hostile (a nextCursor that would
inject a parameter), cursor-expired (every request with a cursor gets 400
expiredCursor), cursor-nototal (totalResults left out), cursor-claim
(totalResults is --claim-total, the pages go on), spc-garbage
(/ServiceProviderConfig answers 200 with HTML).  The faults above apply to
the listings only.

Hostile directories: --raw-bytes replaces each "<RAW-XX>" (XX two hex
digits) in a response body by that byte, so a data set can carry bytes that
are not UTF-8 (JSON text cannot).

SIGHUP reads --data again and serves it from then on; the log gets a line
"RELOADED N" (N counts the reloads) once it is served.
"""
import argparse
import json
import os
import re
import signal
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

CW = "urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser"
LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
USER = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"


def raw_bytes(body):
    """The body with each <RAW-XX> marker made the byte 0xXX."""
    return re.sub(rb"<RAW-([0-9A-Fa-f]{2})>", lambda m: bytes([int(m.group(1), 16)]), body.encode())


def generate(n):
    users, groups = [], []
    for i in range(n):
        name = "user%06d" % i
        users.append({
            "schemas": [USER, CW],
            "id": "u-%d" % i,
            "userName": "%s@example.com" % name,
            "name": {"givenName": "User", "familyName": str(i)},
            "active": True,
            CW: {
                "sunkPosixUsername": name,
                "sunkPosixUserId": 100000 + i,
                "sunkPosixGroupId": 200000 + i // 10,
                "sunkPreferredHomeDirectory": "/home/" + name,
                "sunkLoginShell": "/bin/bash",
                "sunkSshKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI%032d %s@example" % (i, name)],
            },
        })
    for g in range((n + 9) // 10):
        groups.append({
            "schemas": [GROUP],
            "id": "g-%d" % g,
            "displayName": "Group %d" % g,
            "sunkPosixGroupName": "group%05d" % g,
            "sunkPosixGroupId": 200000 + g,
            "members": [{"value": "u-%d" % i, "sunkPosixUsername": "user%06d" % i}
                        for i in range(g * 10, min(n, g * 10 + 10))],
        })
    return {"Users": users, "Groups": groups}


class Resources:
    """Resources rendered to JSON text lazily, once each."""

    def __init__(self, items):
        self.items = items
        self.text = [None] * len(items)
        self.lock = threading.Lock()

    def __len__(self):
        return len(self.items)

    def render(self, lo, hi):
        out = []
        for i in range(lo, hi):
            t = self.text[i]
            if t is None:
                t = json.dumps(self.items[i], separators=(",", ":"))
                self.text[i] = t
            out.append(t)
        return out


class State:
    def __init__(self, args, data):
        self.args = args
        self.data = {k: Resources(v) for k, v in data.items()}
        if args.prerender:
            for res in self.data.values():
                res.render(0, len(res))
        self.lock = threading.Lock()
        self.requests = 0
        self.log = open(args.log, "a", buffering=1) if args.log else None


def storm_page(a, res, start, count):
    """A misbehaving server's page: (body, None), or (None, start) to go on."""
    if a.fault == "storm":
        items = res.render(0, min(count, len(res)))
        return ('{"schemas":["%s"],"totalResults":%d,"itemsPerPage":%d,"Resources":[%s]}'
                % (LIST, a.claim_total, len(items), ",".join(items))), None
    if a.fault == "dwindle" and start > 1:
        items = res.render(min(start - 1, len(res)), min(start, len(res)))
        return ('{"schemas":["%s"],"totalResults":%d,"startIndex":%d,"itemsPerPage":1,'
                '"Resources":[%s]}' % (LIST, len(res), start, ",".join(items))), None
    return None, start


def cursor_page(a, res, q, count):
    """An RFC 9865 page for the cursor in the query: (status, body)."""
    cur = q.get("cursor", [""])[0]
    if cur and a.fault == "cursor-expired":
        return 400, json.dumps({"schemas": ["urn:ietf:params:scim:api:messages:2.0:Error"],
                                "status": "400", "scimType": "expiredCursor",
                                "detail": "cursor expired"})
    try:
        lo = int(cur[1:], 16) if cur else 0
        if cur and (cur[0] != "k" or lo < 0):
            raise ValueError
    except ValueError:
        return 400, json.dumps({"status": "400", "scimType": "invalidCursor"})
    total = len(res)
    lo = min(lo, total)
    hi = min(lo + count, total)
    items = res.render(lo, hi)
    env = ['"schemas":["%s"]' % LIST, '"itemsPerPage":%d' % len(items)]
    if a.fault != "cursor-nototal":
        env.append('"totalResults":%d' % (a.claim_total if a.fault == "cursor-claim" else total))
    if hi < total:
        nxt = "k%x" % hi
        if a.fault == "cursor-loop":
            nxt = "k0"
        elif a.fault == "cursor-hostile":
            nxt = "k%x&startIndex=1" % hi
        env.append('"nextCursor":"%s"' % nxt)
    if cur:
        env.append('"previousCursor":"k%x"' % max(0, lo - count))
    return 200, "{%s,\"Resources\":[%s]}" % (",".join(env), ",".join(items))


def service_provider_config(a):
    """/ServiceProviderConfig for --pagination: (status, body)."""
    if a.fault == "spc-garbage":
        return 200, "<html>It works!</html>"
    if a.pagination != "cursor":
        return 404, json.dumps({"status": "404", "detail": "not found"})
    return 200, json.dumps({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
        "patch": {"supported": False}, "bulk": {"supported": False},
        "filter": {"supported": True, "maxResults": 1000},
        "pagination": {"cursor": True, "index": True, "defaultPaginationMethod": "index",
                       "defaultPageSize": a.page_size, "maxPageSize": a.page_size,
                       "cursorTimeout": 3600}})


def busy_retry_after(value):
    """The Retry-After header value for the busy mode."""
    if value.startswith("date+"):
        from email.utils import formatdate
        return formatdate(time.time() + float(value[5:]), usegmt=True)
    return value


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "scim-fixture/1"
    # Headers and body go out in separate writes: without TCP_NODELAY the
    # tail of every keep-alive response waits for the client's delayed ACK.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *a):
        pass

    def send(self, status, body, ctype="application/scim+json"):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def error(self, status, detail):
        self.send(status, json.dumps({
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:Error"],
            "status": str(status), "detail": detail}))

    def do_GET(self):
        st = self.server.state
        a = st.args
        with st.lock:
            if st.log:
                st.log.write("GET %s\n" % self.path)
        if urlsplit(self.path).path == a.prefix + "/ServiceProviderConfig":
            if self.headers.get("Authorization") != "Bearer " + a.token or a.fault == "401":
                return self.error(401, "unauthorized")
            return self.send(*service_provider_config(a))
        with st.lock:
            st.requests += 1
            nreq = st.requests
        if a.fault == "slow":
            time.sleep(a.delay)
        if a.page_latency:
            time.sleep(a.page_latency / 1000)
        if self.headers.get("Authorization") != "Bearer " + a.token or a.fault == "401":
            return self.error(401, "unauthorized")
        if a.fault == "busy" and nreq <= a.fault_count:
            body = b'{"status":"%d"}' % a.busy_status
            self.send_response(a.busy_status)
            self.send_header("Retry-After", busy_retry_after(a.retry_after))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return None
        if a.fault == "500" and nreq <= a.fault_count:
            return self.error(500, "injected failure")
        u = urlsplit(self.path)
        if not u.path.startswith(a.prefix + "/"):
            return self.error(404, "not found")
        kind = u.path[len(a.prefix) + 1:]
        if kind not in st.data:
            return self.error(404, "not found")
        q = parse_qs(u.query, keep_blank_values=True)
        try:
            start = max(1, int(q.get("startIndex", ["1"])[0]))
            count = int(q["count"][0]) if "count" in q and not a.ignore_count else a.page_size
        except ValueError:
            return self.error(400, "invalid startIndex or count")
        count = max(0, min(count, a.page_size))
        res = st.data[kind]
        if a.pagination == "cursor-only" or (a.pagination == "cursor" and "cursor" in q):
            return self.send(*cursor_page(a, res, q, count))
        body, start = storm_page(a, res, start, count)
        if body is not None:
            return self.send(200, body)
        total = len(res)
        if a.fault == "shrink":
            total = min(total, a.shrink)
        claimed = total + 5 if a.fault == "overclaim" else total
        lo = min(start - 1, total)
        hi = min(lo + count, total)
        items = res.render(lo, hi)
        body = ('{"schemas":["%s"],"totalResults":%d,"startIndex":%d,"itemsPerPage":%d,'
                '"Resources":[%s]}' % (LIST, claimed, start, len(items), ",".join(items)))
        if nreq == a.fault_page:
            if a.fault == "truncate":
                body = body[: max(1, len(body) // 2)]
            elif a.fault == "garbage":
                body = "<html>502 Bad Gateway</html>"
            elif a.fault == "empty":
                body = ""
        if a.raw_bytes:
            body = raw_bytes(body)
        self.send(200, body)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data")
    p.add_argument("--generate", type=int, default=0)
    p.add_argument("--token", default="test-token")
    p.add_argument("--prefix", default="/scim/v2")
    p.add_argument("--port-file", required=True)
    p.add_argument("--log")
    p.add_argument("--page-size", type=int, default=1000)
    p.add_argument("--prerender", action="store_true")
    p.add_argument("--ignore-count", action="store_true")
    p.add_argument("--raw-bytes", action="store_true",
                   help="turn <RAW-XX> markers in bodies into raw bytes")
    p.add_argument("--fault", default="none",
                   choices=["none", "500", "401", "slow", "truncate", "garbage", "empty",
                            "shrink", "refused", "storm", "dwindle", "busy", "overclaim",
                            "cursor-loop", "cursor-hostile", "cursor-expired", "cursor-nototal",
                            "cursor-claim", "spc-garbage"])
    p.add_argument("--pagination", default="index", choices=["index", "cursor", "cursor-only"])
    p.add_argument("--busy-status", type=int, default=429)
    p.add_argument("--retry-after", default="1")
    p.add_argument("--claim-total", type=int, default=900000)
    p.add_argument("--fault-count", type=int, default=1)
    p.add_argument("--fault-page", type=int, default=0)
    p.add_argument("--delay", type=float, default=5.0)
    p.add_argument("--page-latency", type=float, default=0,
                   help="milliseconds to take over every request but /ServiceProviderConfig "
                        "(a directory server's own time per page)")
    p.add_argument("--shrink", type=int, default=0)
    p.add_argument("--tls-cert", help="serve https with this certificate chain (PEM)")
    p.add_argument("--tls-key", help="the certificate's private key (PEM)")
    a = p.parse_args()

    def write_port(port):
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, a.port_file)

    if a.fault == "refused":
        # Bound but never listening: every connection is refused, and no other
        # process can take the port while this one holds it.
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        write_port(s.getsockname()[1])
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
        return 0

    if a.data:
        with open(a.data) as f:
            data = json.load(f)
    else:
        data = generate(a.generate)
    data = {"Users": data.get("Users", []), "Groups": data.get("Groups", [])}
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.state = State(a, data)
    if a.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    reloads = [0]

    def reload(signum, frame):
        # SIGHUP: serve --data as the file holds it now; the log says when.
        with open(a.data) as f:
            d = json.load(f)
        fresh = State(a, {"Users": d.get("Users", []), "Groups": d.get("Groups", [])})
        with srv.state.lock:
            srv.state.data = fresh.data
            reloads[0] += 1
            if srv.state.log:
                srv.state.log.write("RELOADED %d\n" % reloads[0])

    if a.data:
        signal.signal(signal.SIGHUP, reload)
    write_port(srv.server_address[1])
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
