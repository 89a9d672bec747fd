#!/usr/bin/env python3
"""A slurmrestd stand-in for sunkd's tests (python3 stdlib only).

Debian 12's slurmrestd (Slurm 22.05) serves data_parser v0.0.38 and older,
which have no node update: POST /slurm/<version>/node/<name> came with
v0.0.39 (Slurm 23.02).  This fixture answers the three requests the health
module's slurmrestd transport makes, as data_parser v0.0.39 and later do:

  GET  /slurm/<version>/node/<name>   {"nodes": [NODE], "errors": [], ...}
  GET  /slurm/<version>/nodes         {"nodes": [NODE, ...], ...}
  POST /slurm/<version>/node/<name>   {"state": ["DRAIN"], "reason": "..."}
                                      or {"state": ["RESUME"]}

NODE is {"name", "state": ["IDLE", "DRAIN", ...], "reason", "partitions":
[...], ...}.  Every request must carry X-SLURM-USER-NAME and
X-SLURM-USER-TOKEN, an HS256 JWT signed with the bytes of --key (all of
them, as Slurm reads the file), whose "sun" claim is that user and whose
"exp" has not passed; 401 otherwise.  Only --admins (default root) may
update a node (403 otherwise).  A POST body is held to the request's
shape: a JSON object with "state", an array of exactly one of DRAIN or
RESUME, and "reason", a string without control bytes (required for DRAIN);
anything else is 400 with an errors[] body, as slurmrestd's data_parser
refuses what it cannot parse.  Resuming a node that is not drained is 422
"Invalid node state specified", an unknown node 422 "Invalid node name
specified", as slurmctld answers.

Each request is appended to --log as one line: METHOD PATH USER STATUS,
and for a POST the body.  The port is written to --port-file once the
server listens.  --cert and --cert-key serve https.

The test drives the fixture through its own subcommands (no token needed,
not logged):
  ctl PORTFILE set-node JSON       add or replace a node (by name)
  ctl PORTFILE get-node NAME [FIELD]  print the node (or one field; a list
                                   joined with '+')
  ctl PORTFILE mode MODE           how GET requests are answered from now:
                                   normal, oversize (a 2 MiB body), garbage
                                   (not JSON), missing (a node without a
                                   state), truncated, error500 (an HTML 500),
                                   slow (no answer for 30 s), stale-drain
                                   (GET shows a drain that a POST RESUME
                                   finds gone: 422 Invalid node state)
  mint --key FILE --user U [--lifetime S]  print an HS256 token
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import re
import ssl
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ESLURM_ACCESS_DENIED = 2002
ESLURM_INVALID_NODE_NAME = 2018
ESLURM_INVALID_NODE_STATE = 2028
BODY_MAX = 64 * 1024
MODES = ("normal", "oversize", "garbage", "missing", "truncated", "error500", "slow", "stale-drain")
PATH_RE = re.compile(r"^/slurm/(v[0-9]+\.[0-9]+\.[0-9]+)/(node/([^/]+)|nodes/?)$")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def mint(key, user, lifetime):
    now = int(time.time())
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = b64url(json.dumps({"iat": now, "exp": now + lifetime, "sun": user}, separators=(",", ":")).encode())
    sig = hmac.new(key, (head + "." + claims).encode(), hashlib.sha256).digest()
    return head + "." + claims + "." + b64url(sig)


def verify(key, token, user):
    """None when @token is a valid HS256 token for @user, else why not."""
    parts = token.split(".")
    if len(parts) != 3:
        return "the token is not a JWT"
    try:
        head = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        sig = b64url_decode(parts[2])
    except (ValueError, TypeError):
        return "the token does not decode"
    if not isinstance(head, dict) or head.get("alg") != "HS256":
        return "the token is not HS256"
    want = hmac.new(key, (parts[0] + "." + parts[1]).encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(want, sig):
        return "the token's signature does not verify"
    if not isinstance(claims, dict) or claims.get("sun") != user:
        return "the token is not for user %r" % user
    exp = claims.get("exp")
    if not isinstance(exp, int) or exp <= time.time():
        return "the token has expired"
    return None


def errors_body(error, description, number=None):
    e = {"error": error, "description": description, "source": "slurmrestd-fixture"}
    if number is not None:
        e["error_number"] = number
    return {"meta": {}, "errors": [e], "warnings": []}


class Fixture:
    def __init__(self, args, nodes):
        self.args = args
        self.lock = threading.Lock()
        self.nodes = {n["name"]: n for n in nodes}
        self.mode = "normal"
        self.log = open(args.log, "a", buffering=1)
        self.versions = set(args.versions.split(","))
        self.admins = set(args.admins.split(","))

    def record(self, line):
        with self.lock:
            self.log.write(line + "\n")


def full_node(n):
    """A node as data_parser dumps one: what the module reads, and more."""
    out = {"hostname": n["name"], "address": "127.0.0.1", "cpus": 8, "real_memory": 1024,
           "features": [], "gres": "", "comment": "", "reason_changed_at": {"set": True, "number": 0}}
    out.update(n)
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fx = None

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body, ctype="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n < 0 or n > BODY_MAX:
            return None
        return self.rfile.read(n)

    # --- the test's own requests
    def control(self, method):
        fx = self.fx
        with fx.lock:
            if method == "POST" and self.path == "/fixture/node":
                n = json.loads(self.body())
                fx.nodes[n["name"]] = n
                return self.send(200, n)
            if method == "POST" and self.path == "/fixture/mode":
                m = self.body().decode()
                if m not in MODES:
                    return self.send(400, {"error": "no mode " + m})
                fx.mode = m
                return self.send(200, {"mode": m})
            if method == "GET" and self.path.startswith("/fixture/node/"):
                n = fx.nodes.get(self.path[len("/fixture/node/"):])
                return self.send(200 if n else 404, n or {})
        return self.send(404, {})

    # --- slurmrestd's
    def authenticate(self):
        fx = self.fx
        user = self.headers.get("X-SLURM-USER-NAME")
        token = self.headers.get("X-SLURM-USER-TOKEN")
        if not user or not token:
            return user, "X-SLURM-USER-NAME and X-SLURM-USER-TOKEN are required"
        with open(fx.args.key, "rb") as f:
            key = f.read()
        return user, verify(key, token, user)

    def api(self, method):
        fx = self.fx
        user, why = self.authenticate()
        m = PATH_RE.match(self.path)
        payload = None
        if method == "POST":
            payload = self.body()
        if why:
            status, body = 401, errors_body("Authentication failure", why)
        elif not m or m.group(1) not in fx.versions:
            status, body = 404, errors_body("Unable to find requested URL", "no such path: " + self.path)
        elif method == "GET":
            return self.finish_get(user, m)
        elif m.group(3) is None:
            status, body = 405, errors_body("Unsupported HTTP method requested: POST", self.path)
        elif user not in fx.admins:
            status, body = 403, errors_body("Access/permission denied", "Failure to update node " + m.group(3),
                                            ESLURM_ACCESS_DENIED)
        else:
            status, body = self.update(m.group(3), payload)
        self.log_request_line(method, user, status, payload)
        self.send(status, body)

    def log_request_line(self, method, user, status, payload=None):
        line = "%s %s %s %d" % (method, self.path, user or "-", status)
        if payload is not None:
            line += " " + payload.decode(errors="replace")
        self.fx.record(line)

    def finish_get(self, user, m):
        fx = self.fx
        with fx.lock:
            mode = fx.mode
            name = m.group(3)
            if name is None:
                nodes = [full_node(n) for n in fx.nodes.values()]
            elif name in fx.nodes:
                n = dict(fx.nodes[name])
                if mode == "stale-drain":
                    n["state"] = n["state"] + ["DRAIN"] if "DRAIN" not in n["state"] else n["state"]
                    n["reason"] = n.get("reason") or fx.args.stale_reason
                nodes = [full_node(n)]
            else:
                nodes = None
        if nodes is None:
            status, body = 422, errors_body("Invalid node name specified", "Failure to query node " + name,
                                            ESLURM_INVALID_NODE_NAME)
            body["nodes"] = []
        elif mode == "oversize":
            status, body = 200, {"nodes": nodes, "padding": "x" * (2 << 20)}
        elif mode == "garbage":
            status, body = 200, b"<html><body>Welcome to nginx!</body></html>"
        elif mode == "missing":
            status, body = 200, {"nodes": [{"name": n["name"]} for n in nodes]}
        elif mode == "truncated":
            status, body = 200, json.dumps({"nodes": nodes}).encode()[:40]
        elif mode == "error500":
            status, body = 500, b"<html><body>Internal Server Error</body></html>"
        elif mode == "slow":
            time.sleep(30)
            status, body = 200, {"nodes": nodes}
        else:
            status, body = 200, {"nodes": nodes, "last_update": {"set": True, "number": int(time.time())},
                                 "meta": {"plugin": {"data_parser": m.group(1)}}, "errors": [], "warnings": []}
        self.log_request_line("GET", user, status)
        self.send(status, body, "text/html" if isinstance(body, bytes) and status == 500 else "application/json")

    def update(self, name, payload):
        """The request's shape, then its effect: (status, body)."""
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if ctype != "application/json":
            return 415, errors_body("Unknown mime type", "Content-Type %r is not application/json" % ctype)
        if payload is None:
            return 400, errors_body("Unable to parse query", "no body, or more than %d bytes" % BODY_MAX)
        try:
            req = json.loads(payload)
        except ValueError:
            return 400, errors_body("Unable to parse query", "the body is not JSON")
        bad = self.shape_problem(req)
        if bad:
            return 400, errors_body("Unable to parse query", bad)
        fx = self.fx
        with fx.lock:
            n = fx.nodes.get(name)
            if n is None:
                return 422, errors_body("Invalid node name specified", "Failure to update node " + name,
                                        ESLURM_INVALID_NODE_NAME)
            if req["state"] == ["DRAIN"]:
                n["state"] = [s for s in n["state"] if s != "DRAIN"] + ["DRAIN"]
                n["reason"] = req["reason"]
            elif "DRAIN" not in n["state"] and "DOWN" not in n["state"]:
                return 422, errors_body("Invalid node state specified", "Failure to update node " + name,
                                        ESLURM_INVALID_NODE_STATE)
            else:
                n["state"] = [s for s in n["state"] if s not in ("DRAIN", "DOWN")] or ["IDLE"]
                n["reason"] = ""
        return 200, {"meta": {}, "errors": [], "warnings": []}

    @staticmethod
    def shape_problem(req):
        if not isinstance(req, dict):
            return "the body is not an object"
        extra = sorted(set(req) - {"state", "reason"})
        if extra:
            return "unexpected fields: " + ", ".join(extra)
        state = req.get("state")
        if not isinstance(state, list) or len(state) != 1 or state[0] not in ("DRAIN", "RESUME"):
            return "state must be an array of one of DRAIN or RESUME, not %r" % (state,)
        reason = req.get("reason")
        if reason is not None and not isinstance(reason, str):
            return "reason must be a string"
        if reason is not None and any(ord(c) < 0x20 or ord(c) == 0x7f for c in reason):
            return "reason holds control bytes"
        if state == ["DRAIN"] and not reason:
            return "a drain needs a reason"
        return None

    def do_GET(self):
        if self.path.startswith("/fixture/"):
            return self.control("GET")
        self.api("GET")

    def do_POST(self):
        if self.path.startswith("/fixture/"):
            return self.control("POST")
        self.api("POST")


def serve(args):
    with open(args.nodes) as f:
        nodes = json.load(f)
    Handler.fx = Fixture(args, nodes)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    if args.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.cert_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, args.port_file)
    srv.serve_forever()


def ctl(args):
    with open(args.port_file) as f:
        base = "http://127.0.0.1:%d" % int(f.read())
    if args.what == "set-node":
        data, path = args.args[0].encode(), "/fixture/node"
    elif args.what == "mode":
        data, path = args.args[0].encode(), "/fixture/mode"
    else:
        data, path = None, "/fixture/node/" + args.args[0]
    try:
        with urllib.request.urlopen(urllib.request.Request(base + path, data=data), timeout=30) as r:
            out = json.load(r)
    except urllib.error.HTTPError as e:
        sys.exit("slurmrestd-fixture: %s: %s" % (path, e))
    if args.what == "get-node" and len(args.args) > 1:
        v = out.get(args.args[1])
        print("+".join(v) if isinstance(v, list) else ("" if v is None else v))
    elif args.what == "get-node":
        print(json.dumps(out))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd")
    s = sub.add_parser("serve")
    s.add_argument("--port-file", required=True)
    s.add_argument("--log", required=True)
    s.add_argument("--key", required=True)
    s.add_argument("--nodes", required=True)
    s.add_argument("--versions", default="v0.0.39,v0.0.40,v0.0.41,v0.0.42,v0.0.43,v0.0.44")
    s.add_argument("--admins", default="root")
    s.add_argument("--stale-reason", default="sunkd: stale")
    s.add_argument("--cert")
    s.add_argument("--cert-key")
    c = sub.add_parser("ctl")
    c.add_argument("port_file")
    c.add_argument("what", choices=("set-node", "get-node", "mode"))
    c.add_argument("args", nargs="+")
    m = sub.add_parser("mint")
    m.add_argument("--key", required=True)
    m.add_argument("--user", required=True)
    m.add_argument("--lifetime", type=int, default=600)
    args = p.parse_args()
    if args.cmd == "serve":
        serve(args)
    elif args.cmd == "ctl":
        ctl(args)
    elif args.cmd == "mint":
        with open(args.key, "rb") as f:
            print(mint(f.read(), args.user, args.lifetime))
    else:
        p.error("serve, ctl or mint")


if __name__ == "__main__":
    main()
