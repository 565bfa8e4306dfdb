#!/usr/bin/env python3
"""A smart-HTTP git server for the tests, as teams run one: `git http-backend` behind HTTP on
127.0.0.1 with basic authentication. Usage: git-http-server.py ROOT USERS LOG, where USERS holds
`name:password` lines; prints the port it listens on, then serves until killed. Every
authenticated request is logged as `user METHOD path` to LOG; a request without valid
credentials gets 401 and a Basic challenge, which is what makes git ask its credential helper."""
import base64
import http.server
import subprocess
import sys

root, users_file, log = sys.argv[1:4]
with open(users_file) as f:
    users = dict(line.rstrip("\n").split(":", 1) for line in f if ":" in line)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.serve()

    def do_POST(self):
        self.serve()

    def user(self):
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Basic "):
            return None
        name, _, password = base64.b64decode(auth[6:]).decode("utf-8", "replace").partition(":")
        return name if users.get(name) == password else None

    def serve(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        user = self.user()
        if user is None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="coffer team"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with open(log, "a") as f:
            f.write(f"{user} {self.command} {self.path}\n")
        path, _, query = self.path.partition("?")
        environment = {
            "GIT_PROJECT_ROOT": root, "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path, "QUERY_STRING": query,
            "REQUEST_METHOD": self.command, "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)), "REMOTE_USER": user, "REMOTE_ADDR": "127.0.0.1", "PATH": "/usr/bin:/bin",
        }
        for header in ("Content-Encoding", "Git-Protocol"):
            if self.headers.get(header):
                environment["HTTP_" + header.upper().replace("-", "_")] = self.headers[header]
        output = subprocess.run(["git", "http-backend"], input=body, env=environment, capture_output=True).stdout
        separator = b"\r\n\r\n" if b"\r\n\r\n" in output else b"\n\n"
        head, _, rest = output.partition(separator)
        status, headers = 200, []
        for line in head.replace(b"\r\n", b"\n").split(b"\n"):
            name, _, value = line.decode().partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)

    def log_message(self, *arguments):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
