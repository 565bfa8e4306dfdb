#!/usr/bin/python3
"""Coffer in real browsers: headless Chromium driven through the DevTools protocol, or headless
Firefox ESR through WebDriver BiDi — the extension in Browser/extension, the real
coffer-browser-host, a real vault, a scripted pinentry, and a local test site over HTTPS and HTTP
on 127.0.0.1 (Chromium maps the names with --host-resolver-rules; Firefox goes through a local
proxy that sends every *.example.{com,net,org} connection to that site).

    browser_e2e.py --bin DIR --extension DIR --out DIR [--browser chromium|firefox]

The cases are written once against one page interface (cdp.Page, bidi.Page); the few that need
the extension's own contexts (its keyboard command, its storage, a cross-origin frame's target)
run in Chromium only.
DIR holds coffer and coffer-browser-host. Prints one line per case and a JSON summary
(timings included) to OUT/results.json; screenshots of the list and the save bar go to OUT.
Exits 1 if any case fails."""
import argparse
import http.server
import select
import signal
import socket
import json
import re
import os
import shutil
import socketserver
import ssl
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bidi  # noqa: E402
from cdp import Browser, CDPError, Page as CDPPage  # noqa: E402
from relying_party import FRAME as PASSKEY_FRAME, FRAMED as PASSKEY_FRAMED, PASSKEYS, UPGRADE, UPGRADE_FRAMING, RelyingParty  # noqa: E402

RELYING_PARTIES = {}

MASTER = "browser test master"
ALICE = "AlicePw-1"
EXTENSION_ID = "dlecjfndaebcecnkcnnjndgabgahdbko"
PINENTRY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Helpers", "scripted-pinentry")

LOGIN = """<!doctype html><html><head><meta charset="utf-8"><title>Log in</title>
<style>body{font:15px sans-serif;margin:40px} input{display:block;margin:6px 0 14px;padding:6px;width:260px}</style></head>
<body><h1>Example login</h1>
<form method="post" action="/welcome"><label>User <input id="username" name="username" autocomplete="username"></label>
<label>Password <input id="password" name="password" type="password" autocomplete="current-password"></label>
<button id="submit" type="submit">Log in</button></form>
<script>
  window.__timing = [];
  let pressed = 0;
  document.addEventListener("mousedown", () => { pressed = performance.now(); }, true);
  document.getElementById("password").addEventListener("input", () => { if (pressed) window.__timing.push(performance.now() - pressed); pressed = 0; });
</script></body></html>"""

SIGNUP = """<!doctype html><html><head><meta charset="utf-8"><title>Sign up</title></head><body><h1>Create an account</h1>
<form method="post" action="/welcome"><input id="username" name="username" autocomplete="username">
<input id="password" name="password" type="password" autocomplete="new-password">
<input id="confirm" name="confirm" type="password" autocomplete="new-password">
<button id="submit" type="submit">Sign up</button></form></body></html>"""

# A sign-up form whose new-password fields say what the site accepts (Safari's passwordrules).
RULES_PAGE = "minlength: 12; maxlength: 12; required: digit; allowed: [abc]"
RULES_PUBLISHED = "minlength: 16; maxlength: 16; required: digit; allowed: [xyz]"
RULES_SIGNUP = f"""<!doctype html><html><head><meta charset="utf-8"><title>Sign up</title></head><body><h1>Create an account</h1>
<form method="post" action="/welcome"><input id="username" name="username" autocomplete="username">
<input id="password" name="password" type="password" autocomplete="new-password" passwordrules="{RULES_PAGE}">
<input id="confirm" name="confirm" type="password" autocomplete="new-password" passwordrules="{RULES_PAGE}">
<button id="submit" type="submit">Sign up</button></form></body></html>"""

HIDDEN = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<form><input id="username" autocomplete="username">
<input id="trap" type="password" style="position:absolute;left:0;top:0;width:0;height:0;border:0;padding:0">
<input id="password" type="password">
<input id="covered" type="password" style="position:absolute;left:8px;top:200px">
<div style="position:absolute;left:0;top:190px;width:400px;height:60px;background:#fff;z-index:5"></div>
</form></body></html>"""

FRAME = """<!doctype html><html><head><meta charset="utf-8"></head><body><h1>Top page</h1>
<form><input id="username" autocomplete="username"><input id="password" type="password"></form>
<iframe id="child" src="https://evil.example.net/login.html" style="width:500px;height:300px"></iframe></body></html>"""

# The DOM-based extension clickjacking of 2025, both variants, on a sibling host of the saved
# login: the page hides Coffer's list with its own CSS (or its script) under an "Accept"
# button, or covers it with a decoy in the top layer that lets clicks through. (The original
# attack's off-screen password field is no login field at all, SPEC §13.6; these pages keep the
# password on screen so that the list does appear.)
CLICKJACK_CSS = """<!doctype html><html><head><meta charset="utf-8"><style>
coffer-suggestions, coffer-suggestions * { opacity: 0 !important; filter: opacity(0) !important; }
</style></head><body><h1>Sign in</h1>
<form><label>Email <input id="username" type="email" autocomplete="email"></label>
<input id="password" type="password" style="position:absolute;left:8px;top:300px"></form>
<button id="accept" style="position:absolute;left:8px;top:110px;width:400px;height:120px">Accept and continue</button>
<script>window.__stolen = ""; setInterval(() => { const p = document.getElementById("password"); if (p.value) window.__stolen = p.value; }, 20);
if (location.search.includes("script")) new MutationObserver(() => { const host = document.querySelector("coffer-suggestions");
  if (host) host.style.setProperty("opacity", "0", "important"); }).observe(document.documentElement, {childList: true});</script></body></html>"""

CLICKJACK_DECOY = """<!doctype html><html><head><meta charset="utf-8"></head><body><h1>Newsletter</h1>
<form><label>Email <input id="username" type="email" autocomplete="email"></label>
<label>Password <input id="password" type="password"></label></form>
<div id="decoy" popover="manual" style="pointer-events:none;position:fixed;inset:0;margin:0;width:100vw;height:100vh;border:0;background:#fff">
<button style="margin:120px 10px;width:400px;height:120px">Accept and continue</button></div>
<script>window.__stolen = ""; setInterval(() => { const p = document.getElementById("password"); if (p.value) window.__stolen = p.value; }, 20);
new MutationObserver(() => { if (document.querySelector("coffer-suggestions")) setTimeout(() => document.getElementById("decoy").showPopover(), 50); })
  .observe(document.documentElement, {childList: true});</script></body></html>"""

# A payment processor's sign-in in a shop's checkout (the web's data names pay.example.net as one
# that asks for other services' logins when embedded); the same shape from another frame site.
# The frame's fields sit at fixed places so a person's clicks can be aimed from the top page.
PAY = """<!doctype html><html><head><meta charset="utf-8"><style>body{margin:0} input,button{position:absolute;left:10px;width:200px;height:30px}</style>
</head><body><form method="post" action="/welcome"><input id="username" style="top:10px" autocomplete="username">
<input id="password" style="top:60px" type="password" autocomplete="current-password"><button id="submit" style="top:110px">Link bank</button></form></body></html>"""
CHECKOUT = """<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0"><h1>Checkout</h1>
<iframe id="pay" src="https://{frame}/pay.html" style="position:absolute;left:20px;top:120px;width:420px;height:200px;border:0"></iframe></body></html>"""

# A shop whose card fields are a processor's frames (as Stripe, Adyen and Braintree embed them):
# the number and expiry in pay.example.net's frame, the code in a sibling frame of another origin.
CARD_SHOP = """<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0"><h1>Checkout</h1>
<label style="position:absolute;left:20px;top:70px">Name on card <input id="name" autocomplete="cc-name"></label>
<iframe id="pay" src="https://pay.example.net/card-frame.html" style="position:absolute;left:20px;top:120px;width:420px;height:150px;border:0"></iframe>
<iframe id="pay-exp" src="https://pay.example.net/exp-frame.html" style="position:absolute;left:20px;top:280px;width:420px;height:50px;border:0"></iframe>
<iframe id="pay-cvc" src="https://pay.example.net/cvc-frame.html" style="position:absolute;left:20px;top:340px;width:420px;height:50px;border:0"></iframe>
<iframe id="other" src="https://cvc.example.net/cvc-frame.html" style="position:absolute;left:20px;top:400px;width:420px;height:50px;border:0"></iframe></body></html>"""
CARD_FRAME = """<!doctype html><html><head><meta charset="utf-8"><style>body{margin:0} input{position:absolute;left:10px;top:10px;width:200px;height:30px}</style>
</head><body><form><input id="cc" autocomplete="cc-number"></form></body></html>"""
EXP_FRAME = """<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0"><form><input id="exp" autocomplete="cc-exp"></form></body></html>"""
CVC_FRAME = """<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0"><form><input id="cvc" autocomplete="cc-csc"></form></body></html>"""

CARD_CHECKOUT = """<!doctype html><html><head><meta charset="utf-8"><style>input,button{display:block;margin:8px}</style></head><body><h1>Checkout</h1>
<form method="post" action="/welcome"><input id="cc" autocomplete="cc-number" placeholder="Card number"><input id="exp" autocomplete="cc-exp" placeholder="MM/YY">
<input id="cvc" autocomplete="cc-csc" placeholder="CVC"><button id="pay">Pay</button></form></body></html>"""

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
BANK_USER, BANK_PASSWORD = "12345678", "BankPw-1"
CARD_NAME, IDENTITY_NAME = "Travel Visa", "Home address"

WELCOME = "<!doctype html><html><head><meta charset='utf-8'><title>Welcome</title></head><body><h1>Welcome</h1></body></html>"


class Site(http.server.BaseHTTPRequestHandler):
    pages = {"/login.html": LOGIN, "/signup.html": SIGNUP, "/rules-signup.html": RULES_SIGNUP, "/hidden.html": HIDDEN, "/frame.html": FRAME,
             "/clickjack-css.html": CLICKJACK_CSS, "/clickjack-decoy.html": CLICKJACK_DECOY, "/pay.html": PAY,
             "/checkout-pay.html": CHECKOUT.format(frame="pay.example.net"), "/checkout-other.html": CHECKOUT.format(frame="other.example.net"),
             "/passkeys.html": PASSKEYS, "/passkeys-framed.html": PASSKEY_FRAMED, "/passkey-frame.html": PASSKEY_FRAME,
             "/upgrade.html": UPGRADE, "/upgrade-framing.html": UPGRADE_FRAMING,
             "/card-shop.html": CARD_SHOP, "/card-checkout.html": CARD_CHECKOUT, "/card-frame.html": CARD_FRAME, "/exp-frame.html": EXP_FRAME, "/cvc-frame.html": CVC_FRAME}

    def log_message(self, *args):
        pass

    def reply(self, body):
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path.split("?")[0]
        name = path[len("/corpus/"):] if path.startswith("/corpus/") else ""
        if name and "/" not in name and name.endswith(".html") and os.path.isfile(os.path.join(CORPUS, name)):
            with open(os.path.join(CORPUS, name), encoding="utf-8") as f:
                self.reply(f.read())
            return
        self.reply(self.pages.get(path, "<p>not here</p>"))

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.startswith("/webauthn/"):
            host = (self.headers.get("Host") or "").split(":")[0]
            party = RELYING_PARTIES.setdefault(host, RelyingParty(host))
            data = json.dumps(party.handle(self.path, json.loads(body or b"{}"))).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.reply(WELCOME)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def serve(tls_context=None):
    server = Server(("127.0.0.1", 0), Site)
    if tls_context:
        server.socket = tls_context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Proxy(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """An HTTP proxy on 127.0.0.1 for Firefox, which has no host-resolver rules: CONNECT to
    port 443 and plain requests of the test domains reach the local HTTPS and HTTP servers;
    anything else (the browser's own background requests) is refused."""
    daemon_threads = True
    allow_reuse_address = True
    domains = (".example.com", ".example.net", ".example.org")

    def __init__(self, https_port, http_port):
        self.https_port, self.http_port = https_port, http_port
        super().__init__(("127.0.0.1", 0), ProxyHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()


class ProxyHandler(socketserver.BaseRequestHandler):
    def handle(self):
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        method, target = head.split(b"\r\n")[0].split(b" ")[:2]
        if method == b"CONNECT":
            host, _, port = target.decode().rpartition(":")
            if not host.endswith(Proxy.domains) or port != "443":
                self.request.sendall(b"HTTP/1.1 403 Forbidden\r\n\r\n")
                return
            upstream = socket.create_connection(("127.0.0.1", self.server.https_port))
            self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            url = target.decode()
            host = url.split("//", 1)[-1].split("/", 1)[0].split(":")[0]
            if not url.startswith("http://") or not host.endswith(Proxy.domains):
                self.request.sendall(b"HTTP/1.1 403 Forbidden\r\n\r\n")
                return
            upstream = socket.create_connection(("127.0.0.1", self.server.http_port))
            path = "/" + url.split("//", 1)[-1].split("/", 1)[1] if "/" in url.split("//", 1)[-1] else "/"
            upstream.sendall(head.replace(target, path.encode(), 1) + b"\r\n\r\n" + rest)
        sockets = [self.request, upstream]
        try:
            while True:
                readable, _, _ = select.select(sockets, [], [], 30)
                if not readable:
                    return
                for source in readable:
                    chunk = source.recv(65536)
                    if not chunk:
                        return
                    (upstream if source is self.request else self.request).sendall(chunk)
        except OSError:
            return
        finally:
            upstream.close()


# Firefox names an extension's pages by a UUID it draws per profile; this one is fixed, so the
# cases can open the vault page (moz-extension://UUID/vault.html) as a bookmark of it would.
FIREFOX_EXTENSION_UUID = "5d3c1c1e-6f0a-4f7e-9a59-0c0ffe0c0ffe"
FIREFOX_PREFS = {
    "extensions.webextensions.uuids": json.dumps({"coffer@coffer.invalid": FIREFOX_EXTENSION_UUID}),
    "network.proxy.type": 1, "network.proxy.http": "127.0.0.1", "network.proxy.ssl": "127.0.0.1",
    "network.proxy.no_proxies_on": "", "network.proxy.allow_hijacking_localhost": True,
    "dom.security.https_only_mode": False, "browser.shell.checkDefaultBrowser": False,
    "datareporting.policy.dataSubmissionEnabled": False, "toolkit.telemetry.reporter": False,
    "app.update.disabledForTesting": True, "browser.startup.homepage_override.mstone": "ignore",
    "extensions.autoDisableScopes": 0, "extensions.originControls.grantByDefault": True,
    "browser.safebrowsing.malware.enabled": False, "browser.safebrowsing.phishing.enabled": False,
    "network.captive-portal-service.enabled": False, "network.connectivity-service.enabled": False,
}


class Harness:
    def __init__(self, args):
        self.bin, self.extension, self.out = os.path.abspath(args.bin), os.path.abspath(args.extension), args.out
        self.kind = args.browser
        self.root = tempfile.mkdtemp(prefix="coffer-browser-e2e-")
        self.env = {
            "PATH": "/usr/bin:/bin", "HOME": self.root + "/home", "XDG_STATE_HOME": self.root + "/state",
            "XDG_CONFIG_HOME": self.root + "/config", "COFFER_CONTAINER": self.root + "/vault", "COFFER_PINENTRY": PINENTRY,
            "SCRIPTED_PINENTRY_ANSWERS": self.root + "/answers", "SCRIPTED_PINENTRY_LOG": self.root + "/pinentry.log",
        }
        os.makedirs(self.env["HOME"])
        self.results, self.timings = [], {}

    def beside_target(self, name, value, target):
        """A timing is a measurement, never a pass or a fail: a loaded machine is slow, and a test
        that times would fail for it. Kept with its target in the results (OUT/results.json,
        printed at the end) for docs/performance.md."""
        self.timings.setdefault("targets", {})[name] = {"value": round(value, 3), "target": target, "met": value <= target}

    # ---- coffer and the host ----

    def coffer(self, *arguments, stdin=""):
        result = subprocess.run([self.bin + "/coffer", *arguments], input=stdin.encode(), env=self.env, capture_output=True, timeout=60)
        return result.returncode, result.stdout.decode(), result.stderr.decode()

    def prepare_vault(self):
        assert self.coffer("init", "--kdf", "interactive", "--password-stdin", stdin=MASTER + "\n")[0] == 0
        # A card and an identity for the payment and address forms of the corpus (SPEC §6.8).
        card = "cardholder: Alice Example\nnumber: 4111 1111 1111 1111\nbrand: Visa\nexpiry: 07/2029\nsecurity code: 123\n"
        assert self.coffer("add", "--name", CARD_NAME, "--kind", "card", "--password-stdin", stdin=f"{MASTER}\n{card}")[0] == 0
        identity = ("given name: Alice\nfamily name: Example\naddress: 1 Main St\naddress: Apt 2\ncity: Springfield\nregion: IL\n"
                    "postal code: 62701\ncountry: US\nphone: +1 217 555 0100\nemail: alice@example.com\n")
        assert self.coffer("add", "--name", IDENTITY_NAME, "--kind", "identity", "--password-stdin", stdin=f"{MASTER}\n{identity}")[0] == 0
        assert self.coffer("add", "https://login.example.com", "alice", "--password-stdin", stdin=f"{MASTER}\n{ALICE}\n")[0] == 0
        assert self.coffer("add", "https://bank.example.org", BANK_USER, "--password-stdin", stdin=f"{MASTER}\n{BANK_PASSWORD}\n")[0] == 0

    def install_host(self, profile):
        """The manifest goes into the throw-away profile; its path is a wrapper that records
        every frame in and out, so the cases can check what the host sent and when."""
        wrapper = self.root + "/host-wrapper"
        # The web's published password rules, as the host reads them (SPEC §12.1), for one test site.
        os.makedirs(self.root + "/web-quirks", exist_ok=True)
        with open(self.root + "/web-quirks/password-rules.json", "w") as f:
            json.dump({"rules.example.net": {"password-rules": RULES_PUBLISHED}}, f)
        # ... and which sites share logins, append codes, or ask for others' logins when embedded.
        for name, data in [("shared-credentials.json", [{"from": ["bank.example.org"], "to": ["partner.example.net"]}]),
                           ("websites-that-append-2fa-to-password.json", ["bank.example.org"]),
                           ("websites-that-ask-for-credentials-for-other-services-when-embedded-as-third-party.json", ["pay.example.net"])]:
            with open(self.root + "/web-quirks/" + name, "w") as f:
                json.dump(data, f)
        with open(wrapper, "w") as f:
            # Each start of the host is logged by the wrapper's pid (host_starts).
            # The clipboard's clear delay is short here, so the vault page's case can see it cleared.
            f.write(f"#!/bin/sh\nexport COFFER_WEB_QUIRKS='{self.root}/web-quirks' COFFER_CLIP_TIME=2\n"
                    f"echo $$ >> '{self.root}/host-starts.log'\ntee -a '{self.root}/host-in.log' | '{self.bin}/coffer-browser-host' \"$@\" | tee -a '{self.root}/host-out.log'\n")
        os.chmod(wrapper, 0o755)
        where = ["--browser", "firefox"] if self.kind == "firefox" else ["--user-data-dir", profile]
        code, out, err = self.coffer("browser", "install", *where, "--host", wrapper)
        assert code == 0, err

    def frames(self, name):
        try:
            data = open(f"{self.root}/host-{name}.log", "rb").read()
        except OSError:
            return []
        frames, offset = [], 0
        while offset + 4 <= len(data):
            length = struct.unpack("<I", data[offset:offset + 4])[0]
            frames.append(json.loads(data[offset + 4:offset + 4 + length]))
            offset += 4 + length
        return frames

    def host_starts(self):
        """The pid of the wrapper of each host the browser started, in order."""
        try:
            return [int(line) for line in open(self.root + "/host-starts.log").read().split()]
        except OSError:
            return []

    def answers(self, fields):
        with open(self.env["SCRIPTED_PINENTRY_ANSWERS"], "w") as f:
            f.write("\n".join(fields))

    def prompts(self):
        try:
            return open(self.env["SCRIPTED_PINENTRY_LOG"]).read().count("GETPIN")
        except OSError:
            return 0

    def unlock(self):
        assert self.coffer("unlock", "--password-stdin", stdin=MASTER + "\n")[0] == 0

    def lock(self):
        self.coffer("lock")

    # ---- the browser ----

    def start(self):
        certificate = self.root + "/site"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=example.com",
                        "-addext", "subjectAltName=DNS:*.example.com,DNS:*.example.net,DNS:*.example.org",
                        "-keyout", certificate + ".key", "-out", certificate + ".crt"], check=True, capture_output=True)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate + ".crt", certificate + ".key")
        self.https, self.http = serve(context), serve()
        https_port, http_port = self.https.server_address[1], self.http.server_address[1]
        self.ports = (https_port, http_port)
        profile = self.root + "/profile"
        self.install_host(profile)
        self.launch(profile)

    def restart(self):
        """The browser quits and starts again (the vault, the host's session and the site stay)."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        if self.kind == "firefox":
            self.launch(self.root + f"/profile-{time.time_ns()}")  # Firefox's temporary add-on goes with its profile
        else:
            try:
                os.remove(self.root + "/profile/DevToolsActivePort")
            except OSError:
                pass
            self.launch(self.root + "/profile")

    def launch(self, profile):
        https_port, http_port = self.ports
        if self.kind == "firefox":
            return self.start_firefox(profile, https_port, http_port)
        rules = ", ".join(f"MAP *.{domain}:443 127.0.0.1:{https_port}, MAP *.{domain}:80 127.0.0.1:{http_port}"
                          for domain in ("example.com", "example.net", "example.org"))
        self.process = subprocess.Popen(
            ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             f"--user-data-dir={profile}", "--remote-debugging-port=0", f"--load-extension={self.extension}",
             f"--disable-extensions-except={self.extension}", f"--host-resolver-rules={rules}", "--ignore-certificate-errors",
             # Chromium would upgrade the http pages to the test site's https server otherwise.
             "--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable",
             "--window-size=1000,700", "about:blank"],
            env={**self.env, "HOME": self.root + "/chromium-home"}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        for _ in range(300):
            try:
                port, path = open(profile + "/DevToolsActivePort").read().split("\n")[:2]
                break
            except (OSError, ValueError):
                time.sleep(0.05)
        self.browser = Browser(f"ws://127.0.0.1:{port}{path}")
        self.worker = None
        for _ in range(100):
            workers = [t for t in self.browser.targets() if t["type"] == "service_worker" and EXTENSION_ID in t["url"]]
            if workers:
                self.worker = self.browser.attach(workers[0]["targetId"])
                break
            time.sleep(0.1)
        assert self.worker, "the extension's service worker did not start (is its id the manifest key's?)"
        self.browser.call("Runtime.enable", session=self.worker)

    def start_firefox(self, profile, https_port, http_port):
        """Firefox ESR, headless, its BiDi endpoint on a free port; the extension installed
        temporarily over BiDi (webExtension.install), as about:debugging would."""
        self.proxy = Proxy(https_port, http_port)
        os.makedirs(profile)
        prefs = dict(FIREFOX_PREFS, **{"network.proxy.http_port": self.proxy.server_address[1],
                                       "network.proxy.ssl_port": self.proxy.server_address[1]})
        with open(profile + "/user.js", "w") as f:
            for name, value in prefs.items():
                f.write(f"user_pref({json.dumps(name)}, {json.dumps(value)});\n")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.process = subprocess.Popen(
            # System access lets a case open an extension page as the address bar does (BiDi's own
            # navigate refuses moz-extension: addresses).
            ["firefox-esr", "--headless", "--no-remote", "--profile", profile, f"--remote-debugging-port={port}", "--remote-allow-system-access",
             "--window-size=1000,700", "about:blank"],
            env={**self.env, "MOZ_HEADLESS": "1"}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)  # Firefox may restart itself on a new profile: stop() ends the whole group
        for _ in range(300):
            try:
                self.browser = bidi.Browser(f"ws://127.0.0.1:{port}/session")
                break
            except (OSError, Exception):  # not listening yet, or not ready for sessions
                time.sleep(0.1)
        else:
            raise AssertionError("Firefox's WebDriver BiDi endpoint did not open")
        self.browser.call("session.new", {"capabilities": {"alwaysMatch": {"acceptInsecureCerts": True}}})
        self.browser.call("webExtension.install", {"extensionData": {"type": "path", "path": self.extension}})
        self.worker = None

    def in_worker(self, expression):
        result = self.browser.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True},
                                   session=self.worker)
        if "exceptionDetails" in result:
            raise CDPError(f"worker: {result['exceptionDetails']}")
        return result["result"].get("value")

    def target(self, kind, url_matches, what):
        """The DevTools target (Chromium) of `kind` ("page", "iframe") whose URL `url_matches`,
        waited for up to 5 s; the case fails with `what` when none comes."""
        for _ in range(50):
            found = next((t for t in self.browser.targets() if t["type"] == kind and url_matches(t["url"])), None)
            if found:
                return found
            time.sleep(0.1)
        raise AssertionError(what)

    def command(self, url_prefix):
        """What Ctrl+Shift+L runs (a headless browser has no shortcuts): the worker's handler."""
        return self.in_worker(f"(async () => {{ const [tab] = await chrome.tabs.query({{url: {json.dumps(url_prefix + '*')}}});"
                              " await cofferCommand('fill-login', tab); return tab.id; })()")

    def stop(self):
        try:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)  # the browser and every process it started
            except ProcessLookupError:
                pass
            self.process.wait(10)
        finally:
            self.lock()
            shutil.rmtree(self.root, ignore_errors=True)

    # ---- the cases ----

    def case(self, name, function):
        started = time.time()
        try:
            function()
            self.results.append({"case": name, "ok": True, "seconds": round(time.time() - started, 2)})
            print(f"ok    {name}")
        except Exception as error:  # noqa: BLE001 - every failure is reported, the run goes on
            self.results.append({"case": name, "ok": False, "error": f"{type(error).__name__}: {error}"})
            print(f"FAIL  {name}: {type(error).__name__}: {error}")

    @staticmethod
    def check(condition, message):
        if not condition:
            raise AssertionError(message)

    def open_list(self, page, selector="#username"):
        """Clicks the field as a person does, waits for the list, and looks at it for a moment
        (a click on a list that was not on screen for a while does not count)."""
        page.click(selector)
        self.check(page.wait("!!document.querySelector('coffer-suggestions')", timeout=5), "no suggestion list appeared under the field")
        time.sleep(0.8)
        items = page.shadow_items("coffer-suggestions", "item")
        self.check(items, "the list has no items")
        return items

    def fill_answers_to(self, origin, since=0):
        """The host's answers (from the `since`-th on) to fill requests from `origin` that
        carried a password."""
        requests = {f["id"]: f for f in self.frames("in")}
        return [a for a in self.frames("out")[since:] if requests.get(a.get("id"), {}).get("type") == "fill"
                and requests.get(a.get("id"), {}).get("origin") == origin and "password" in a]

    # ---- the form corpus (Tests/Browser/corpus): one page a shape, its expectation inside ----

    DEEP = """(selector) => { let node = document;
        for (const part of selector.split(">>>").map((p) => p.trim())) { node = (node.shadowRoot ?? node).querySelector(part); if (!node) return null; }
        return node; }"""
    SNAPSHOT = """(() => { const values = {};
        const walk = (root, prefix) => { for (const element of root.querySelectorAll("*")) {
            if ((element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement || element instanceof HTMLSelectElement) && element.id) values[prefix + "#" + element.id] = element.value;
            if (element.shadowRoot && element.id) walk(element.shadowRoot, prefix + "#" + element.id + " >>> "); } };
        walk(document, ""); return values; })()"""

    def click_deep(self, page, selector):
        """Clicks the centre of a field, inside open shadow roots too: a real pointer event there."""
        box = page.evaluate(f"(() => {{ const r = ({self.DEEP})({json.dumps(selector)}).getBoundingClientRect();"
                            " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        page.click_at(*box)

    def corpus_shape(self, page, name):
        """One shape: a person clicks what the page says, then (when a list should appear) its
        first item; every field of the page then holds what the shape expects, and every field
        it names no value for holds what it held before."""
        source = open(os.path.join(CORPUS, name)).read()
        host = "bank.example.org" if '"site": "bank"' in source else "login.example.com"
        scheme = "http" if '"scheme": "http"' in source else "https"
        page.navigate(f"{scheme}://{host}/corpus/{name}")
        expect = json.loads(page.evaluate("document.getElementById('coffer-expect').textContent"))
        user, password = (BANK_USER, BANK_PASSWORD) if host.startswith("bank.") else ("alice", ALICE)
        for selector in expect.get("before", []):
            self.click_deep(page, selector)
            time.sleep(0.1)
        before = page.evaluate(self.SNAPSHOT)
        self.click_deep(page, expect["focus"])
        if expect["offer"] == "none":
            time.sleep(0.7)
            self.check(page.evaluate("document.querySelector('coffer-suggestions') === null"), f"{name}: a list was offered on {expect['focus']}")
            self.check(page.evaluate(self.SNAPSHOT) == before, f"{name}: a field changed")
            return
        self.check(page.wait("!!document.querySelector('coffer-suggestions')", timeout=5), f"{name}: no list on {expect['focus']}")
        time.sleep(0.5)
        text = page.shadow_text("coffer-suggestions")
        if expect["offer"] == "generated":
            self.check("generated" in text and user not in text, f"{name}: a new-password field should offer only a generated password: {text[-160:]!r}")
        elif expect["offer"] in ("card", "identity"):
            # A payment field offers the cards, an address field the identities: never a login.
            wanted_name, other_name = (CARD_NAME, IDENTITY_NAME) if expect["offer"] == "card" else (IDENTITY_NAME, CARD_NAME)
            self.check(wanted_name in text and other_name not in text and user not in text, f"{name}: the list should offer {wanted_name} only: {text[-160:]!r}")
        else:
            self.check(user in text and "generated" not in text, f"{name}: the list should offer the saved login: {text[-160:]!r}")
        page.click_at(*page.shadow_items("coffer-suggestions", "item")[0])
        wanted = {key: {"$user": user, "$password": password}.get(value, value) for key, value in expect["expect"].items()}
        first = next(key for key, value in wanted.items() if value == "$generated" or value != before.get(key))
        self.check(page.wait(f"({self.DEEP})({json.dumps(first)}).value !== {json.dumps(before.get(first, ''))}", timeout=5),
                   f"{name}: {first} was not filled")
        time.sleep(0.1)
        after = page.evaluate(self.SNAPSHOT)
        generated = {after.get(key) for key, value in wanted.items() if value == "$generated"}
        if generated:
            self.check(len(generated) == 1 and "" not in generated and password not in generated,
                       f"{name}: the new-password fields should hold one generated password: {generated}")
        for key, value in after.items():
            target = wanted.get(key, before.get(key))
            if target != "$generated":
                self.check(value == target, f"{name}: {key} holds {value!r}, expected {target!r}")
        if "check" in expect:
            self.check(page.evaluate(expect["check"]), f"{name}: {expect['check']}")

    def values(self, page, *ids):
        return [page.evaluate(f"document.getElementById({json.dumps(i)}).value") for i in ids]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--extension", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--browser", choices=["chromium", "firefox"], default="chromium")
    parser.add_argument("--only", help="run only the cases whose name contains this")
    parser.add_argument("--bulk", type=int, default=10_000, help="items the vault page's search case imports (the benchmark's 100,000)")
    parser.add_argument("--axe", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".build", "test-tools", "axe.min.js"),
                        help="axe-core's axe.min.js (scripts/fetch-axe puts it there)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    h = Harness(args)
    h.prepare_vault()
    h.unlock()
    h.start()
    check = h.check
    page = h.browser.new_page("https://login.example.com/login.html")

    def host_runs_with_the_browser():
        """The extension starts its host with the browser, unasked, and keeps it: the vault page,
        opened later, is answered by that same process and starts no other (SPEC.md §13.7)."""
        deadline = time.time() + 10
        while not h.host_starts() and time.time() < deadline:
            time.sleep(0.1)
        started = h.host_starts()
        check(len(started) == 1, f"hosts started with the browser: {started}")
        check(not h.frames("in"), "the host was asked something before any page asked")
        vp = open_vault_page()
        check(h.host_starts() == started, f"the vault page started another host: {h.host_starts()}")
        check(os.path.exists(f"/proc/{started[0]}"), "the host started with the browser is gone")
        check(any(f.get("type") == "vaultItems" for f in h.frames("in")), "the vault page's list never reached the host")
        vp.close()

    def list_then_click():
        items = h.open_list(page)
        page.screenshot(os.path.join(h.out, "suggestions.png"))
        page.click_at(*items[0])
        check(page.wait(f"document.getElementById('password').value === {json.dumps(ALICE)}"), "the click did not fill the password")
        check(h.values(page, "username") == ["alice"], "the user name was not filled")
        check(page.evaluate("document.querySelector('coffer-suggestions') === null"), "the list stayed open")
        check(page.evaluate("document.querySelector('coffer-suggestions')?.shadowRoot ?? null") is None, "the page can read the list")

    def keyboard():
        page.navigate("https://login.example.com/login.html")
        h.open_list(page)
        page.key("Escape", "Escape", 27)
        check(page.wait("document.querySelector('coffer-suggestions') === null"), "Escape did not close the list")
        h.open_list(page)
        page.key("ArrowDown", "ArrowDown", 40)
        page.key("Enter", "Enter", 13)
        check(page.wait(f"document.getElementById('password').value === {json.dumps(ALICE)}"), "ArrowDown + Enter did not fill")

    def sibling():
        other = h.browser.new_page("https://other.example.com/login.html")
        items = h.open_list(other)
        check(len(items) == 1, "the sibling's list should offer alice once, marked")
        h.command("https://other.example.com/")
        time.sleep(0.5)
        check(h.values(other, "username", "password") == ["", ""], "the keyboard command filled a sibling host's login")
        answers = [f for f in h.frames("out") if f.get("error", {}).get("code") == "choiceRequired"]
        check(answers, "the host did not answer the sibling's command with choiceRequired")
        items = h.open_list(other)
        other.click_at(*items[0])
        check(other.wait(f"document.getElementById('password').value === {json.dumps(ALICE)}"), "a clicked sibling suggestion did not fill")
        other.close()

    def iframe():
        framed = h.browser.new_page("https://login.example.com/frame.html")
        # The cross-origin frame is its own target (site isolation): focus its field there.
        child = h.target("iframe", lambda url: "evil.example.net" in url, "the cross-origin iframe did not load")
        session = h.browser.attach(child["targetId"])
        h.browser.call("Runtime.evaluate", {"expression": "document.getElementById('username').focus()"}, session=session)
        time.sleep(1.0)
        requests = {f["id"]: f for f in h.frames("in")}
        evil = [a for a in h.frames("out") if requests.get(a.get("id"), {}).get("origin") == "https://evil.example.net"]
        check(evil, "the iframe's content script never asked the host")
        check(all(a.get("identities") == [] for a in evil if "identities" in a), "the cross-origin iframe got suggestions")
        check(not any(ALICE in json.dumps(a) or "alice" in json.dumps(a) for a in evil), "the iframe got the top page's login")
        framed.close()

    def plain_http():
        insecure = h.browser.new_page("http://login.example.com/login.html")
        check(insecure.evaluate("location.protocol") == "http:", "the page was upgraded to https")
        insecure.click("#username")
        time.sleep(0.8)
        check(insecure.evaluate("document.querySelector('coffer-suggestions') === null"), "an https login was offered to an http page")
        h.command("http://login.example.com/")
        time.sleep(0.5)
        check(h.values(insecure, "username", "password") == ["", ""], "an https login was filled into an http page")
        insecure.close()

    def hidden_fields():
        hidden = h.browser.new_page("https://login.example.com/hidden.html")
        items = h.open_list(hidden)
        hidden.click_at(*items[0])
        check(hidden.wait(f"document.getElementById('password').value === {json.dumps(ALICE)}"), "the visible password field was not filled")
        check(h.values(hidden, "trap", "covered") == ["", ""], "a zero-sized or covered field was filled")
        hidden.close()

    def page_attacks():
        page.navigate("https://login.example.com/login.html")
        h.open_list(page)
        page.evaluate("""(() => {
            const host = document.querySelector('coffer-suggestions');
            for (const type of ['mousedown', 'click']) host.dispatchEvent(new MouseEvent(type, {bubbles: true, composed: true}));
            document.getElementById('username').dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowDown', bubbles: true}));
            document.getElementById('username').dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
            window.postMessage({type: 'fill', trigger: 'choice'}, '*');
        })()""")
        time.sleep(0.5)
        check(h.values(page, "password") == [""], "synthetic page events filled the password")
        check(page.evaluate("document.querySelector('coffer-suggestions').shadowRoot") is None, "the list's shadow root is open to the page")

    def keyboard_command():
        page.navigate("https://login.example.com/login.html")
        page.click("#password")
        h.command("https://login.example.com/")
        check(page.wait(f"document.getElementById('password').value === {json.dumps(ALICE)}"), "the keyboard command did not fill")

    def timing():
        samples, host_share = [], []
        for _ in range(20):
            page.navigate("https://login.example.com/login.html")
            items = h.open_list(page)
            page.click_at(*items[0])
            page.wait("window.__timing.length > 0")
            samples.append(page.evaluate("window.__timing[0]"))
        requests = {f["id"]: f for f in h.frames("in")}
        host_share = [a["elapsedMs"] for a in h.frames("out") if requests.get(a.get("id"), {}).get("trigger") == "choice" and "elapsedMs" in a][-20:]
        h.timings["clickToFilledMs"] = {"median": round(statistics.median(samples), 2), "max": round(max(samples), 2), "runs": len(samples)}
        h.timings["hostFillMs"] = {"median": round(statistics.median(host_share), 3)} if host_share else None
        suggest = [a["elapsedMs"] for a in h.frames("out") if requests.get(a.get("id"), {}).get("type") == "suggest" and "elapsedMs" in a]
        h.timings["hostSuggestMs"] = {"median": round(statistics.median(suggest), 3)} if suggest else None
        h.beside_target("clickToFilledMedianMs", statistics.median(samples), 50)

    def locked_with_pinentry():
        h.lock()
        before = h.prompts()
        h.answers([MASTER])
        page.navigate("https://login.example.com/login.html")
        items = h.open_list(page)
        requests = {f["id"]: f for f in h.frames("in")}
        last_suggest = [a for a in h.frames("out") if requests.get(a.get("id"), {}).get("type") == "suggest"][-1]
        check(last_suggest.get("locked") is True and last_suggest.get("identities"), "locked: the list should still show, marked locked")
        page.click_at(*items[0])
        check(page.wait(f"document.getElementById('password').value === {json.dumps(ALICE)}", timeout=15), "pinentry's right password did not fill")
        check(h.prompts() == before + 1, "the right password should take one prompt")
        # The pinentry unlock started a session: the next fill does not ask.
        page.navigate("https://login.example.com/login.html")
        page.click_at(*h.open_list(page)[0])
        check(page.wait(f"document.getElementById('password').value === {json.dumps(ALICE)}"), "the session did not fill")
        check(h.prompts() == before + 1, "a live session asked again")
        # coffer lock while the browser runs: the next fill asks again; wrong three times fills nothing.
        h.lock()
        h.answers(["wrong", "wrong", "wrong"])
        page.navigate("https://login.example.com/login.html")
        page.click_at(*h.open_list(page)[0])
        time.sleep(2.0)
        check(h.values(page, "password") == [""], "three wrong passwords filled anyway")
        check(h.prompts() == before + 4, f"coffer lock should make the host ask again (prompts {h.prompts() - before})")
        h.answers(["CANCEL"])
        page.navigate("https://login.example.com/login.html")
        page.click_at(*h.open_list(page)[0])
        time.sleep(1.0)
        check(h.values(page, "password") == [""], "cancel filled anyway")

    def save_new_login():
        h.unlock()
        signup = h.browser.new_page("https://new.example.com/signup.html")
        # A person clicks each field and types, looking at the page between: every click must
        # land where it was aimed, whatever Coffer shows meanwhile.
        signup.click("#username")
        time.sleep(0.5)
        check("generated" not in signup.shadow_text("coffer-suggestions"),
              "the user name field offered a generated password (it belongs to new-password fields only)")
        signup.type_text("nina")
        signup.click("#password")
        check(signup.wait("!!document.querySelector('coffer-suggestions')", timeout=5), "no list on the new-password field")
        time.sleep(0.5)
        check("generated" in signup.shadow_text("coffer-suggestions"), "no generated password offered on the new-password field")
        signup.screenshot(os.path.join(h.out, "signup-generated.png"))
        signup.type_text("Nina-New-1")
        signup.click("#confirm")
        time.sleep(0.5)
        signup.type_text("Nina-New-1")
        check(h.values(signup, "username", "password", "confirm") == ["nina", "Nina-New-1", "Nina-New-1"],
              f"what the person typed did not land in the fields they clicked: {h.values(signup, 'username', 'password', 'confirm')}")
        signup.click("#submit")
        check(signup.wait("location.pathname === '/welcome' && document.readyState === 'complete'", timeout=10), "the form was not submitted")
        time.sleep(0.4)
        check(signup.wait("!!document.querySelector('coffer-save-bar')", timeout=8), "no save bar after the form was submitted")
        signup.screenshot(os.path.join(h.out, "save-bar.png"))
        buttons = signup.shadow_items("coffer-save-bar", "primary")
        check(buttons, "the save bar has no Save button")
        signup.click_at(*buttons[0])
        time.sleep(1.0)
        code, out, _ = h.coffer("list", "new.example.com")
        check(code == 0 and "nina" in out, f"the new login was not saved: {out}")
        # Back on the site's sign-in page the new login is offered (a sign-up form offers none:
        # its password fields are new-password fields, SPEC §13.6).
        signup.navigate("https://new.example.com/login.html")
        check(h.open_list(signup), "the saved login is not suggested")
        signup.close()

    def password_rules():
        # The field's passwordrules wins; without it, the rule published for the page's host;
        # without either, the default generator.
        for url, pattern, what in [
            ("https://new.example.com/rules-signup.html", r"^[abc0-9]{12}$", "the field's passwordrules"),
            ("https://rules.example.net/rules-signup.html", r"^[abc0-9]{12}$", "the field's passwordrules over the published rule"),
            ("https://rules.example.net/signup.html", r"^[xyz0-9]{16}$", "the rule published for the host"),
            ("https://new.example.com/signup.html", r"^.{20}$", "the default generator"),
        ]:
            page = h.browser.new_page(url)
            page.click("#password")
            check(page.wait("!!document.querySelector('coffer-suggestions')", timeout=5), f"{url}: no list on the new-password field")
            time.sleep(0.5)
            check("generated" in page.shadow_text("coffer-suggestions"), f"{url}: no generated password offered")
            page.click_at(*page.shadow_items("coffer-suggestions", "item")[0])
            check(page.wait("document.getElementById('password').value !== ''", timeout=5), f"{url}: nothing was filled")
            password, confirm = h.values(page, "password", "confirm")
            check(password == confirm, f"{url}: the confirmation differs")
            check(re.match(pattern, password) is not None and (pattern.startswith("^.") or re.search(r"[0-9]", password)),
                  f"{url}: the generated password does not follow {what}: {password!r}")
            page.close()

    def clickjacking_hidden_list():
        for url in ("https://other.example.com/clickjack-css.html", "https://other.example.com/clickjack-css.html?script"):
            since = len(h.frames("out"))
            trap = h.browser.new_page(url)
            trap.click("#username")
            if "script" in url:  # the page's script restyles the list as soon as it appears
                time.sleep(0.8)
                check(trap.evaluate("document.querySelector('coffer-suggestions') === null"),
                      "the list stayed open after the page restyled it")
                # The person clicks "Accept and continue", where the list's first item was.
                trap.click_at(200, 140)
            else:
                # The page's CSS cannot make the list transparent: a person sees what is under
                # the pointer. The attack's click comes with the gesture that opened the list
                # (the list appears under a pointer already on its way): too soon to count.
                check(trap.wait("!!document.querySelector('coffer-suggestions')", timeout=5), "no list on the trap page")
                check(trap.evaluate("getComputedStyle(document.querySelector('coffer-suggestions')).opacity") == "1",
                      "the page's CSS made the list transparent")
                items = trap.shadow_items("coffer-suggestions", "item")
                check(items, "the list has no items")
                trap.click_at(*items[0])
            time.sleep(1.0)
            check(trap.evaluate("window.__stolen") == "" and h.values(trap, "password") == [""], "the page got the password")
            check(not h.fill_answers_to("https://other.example.com", since), "the host released a password to the trap page")
            trap.close()

    def clickjacking_decoy():
        since = len(h.frames("out"))
        trap = h.browser.new_page("https://other.example.com/clickjack-decoy.html")
        trap.click("#username")
        check(trap.wait("!!document.querySelector('coffer-suggestions') || document.getElementById('decoy').matches(':popover-open')", timeout=5),
              "no list on the decoy page")
        check(trap.wait("document.getElementById('decoy').matches(':popover-open')", timeout=5), "the decoy did not open")
        time.sleep(0.8)
        items = trap.shadow_items("coffer-suggestions", "item")
        trap.click_at(*(items[0] if items else (200, 140)))
        time.sleep(1.0)
        check(trap.evaluate("window.__stolen") == "" and h.values(trap, "password") == [""], "a click through the decoy filled the password")
        check(not h.fill_answers_to("https://other.example.com", since), "the host released a password under a decoy")
        trap.close()

    def fill_on_load():
        h.in_worker("chrome.storage.local.set({fillOnLoad: true})")
        page.navigate("https://login.example.com/login.html")
        check(page.wait(f"document.getElementById('password').value === {json.dumps(ALICE)}", timeout=5), "fill on page load did not fill")
        insecure = h.browser.new_page("http://login.example.com/login.html")
        time.sleep(0.8)
        check(h.values(insecure, "password") == [""], "fill on load filled over http")
        insecure.close()
        h.lock()
        page.navigate("https://login.example.com/login.html")
        time.sleep(0.8)
        check(h.values(page, "password") == [""], "fill on load filled while locked")
        h.in_worker("chrome.storage.local.set({fillOnLoad: false})")
        h.unlock()

    def only_fills_carry_passwords():
        requests = {f["id"]: f for f in h.frames("in")}
        for answer in h.frames("out"):
            if ALICE in json.dumps(answer):
                request = requests.get(answer.get("id"), {})
                check(request.get("type") == "fill" and request.get("trigger") in ("choice", "command", "pageLoad"),
                      f"the host sent a password in answer to {request.get('type')}")

    def shared_site():
        # bank.example.org's login is offered on partner.example.net, naming where it was saved,
        # and filled only when the person clicks it.
        partner = h.browser.new_page("https://partner.example.net/login.html")
        items = h.open_list(partner)
        check(len(items) == 1, f"the sharing site's login should be offered once: {len(items)} items")
        check("saved for bank.example.org" in partner.shadow_text("coffer-suggestions"), "the suggestion does not name the site it was saved for")
        check(h.values(partner, "username", "password") == ["", ""], "something was filled before the person chose")
        partner.click_at(*items[0])
        check(partner.wait(f"document.getElementById('password').value === {json.dumps(BANK_PASSWORD)}"), "the clicked suggestion did not fill")
        check(h.values(partner, "username") == [BANK_USER], "the user name was not filled")
        partner.close()
        # Not the other way round: from → to only.
        other = h.browser.new_page("https://bank.example.org/login.html")
        items = h.open_list(other)
        check(all("partner" not in text for text in [other.shadow_text("coffer-suggestions")]), "a to-site's login offered on the from-site")
        other.close()

    def sign_in_typed(page, user, password):
        """A person signs in by hand: click, type, close the list, click, type, close, submit."""
        for selector, text in (("#username", user), ("#password", password)):
            page.click(selector)
            time.sleep(0.4)
            page.type_text(text)
            page.key("Escape", "Escape", 27)
        check(h.values(page, "username", "password") == [user, password], f"what was typed did not land: {h.values(page, 'username', 'password')}")
        page.click("#submit")
        check(page.wait("location.pathname === '/welcome' && document.readyState === 'complete'", timeout=10), "the form was not submitted")
        time.sleep(1.5)
        return page.evaluate("!!document.querySelector('coffer-save-bar')")

    def appended_code():
        # On a site that asks for a code after the password, the stored password + digits is no
        # new password: no "Update"; elsewhere the same shape is one.
        h.unlock()
        bank = h.browser.new_page("https://bank.example.org/login.html")
        check(not sign_in_typed(bank, BANK_USER, BANK_PASSWORD + "123456"), "the save bar offered to update a password with a code appended")
        answers = [f for f in h.frames("out") if f.get("appendedCode") is True]
        check(answers, "the host did not recognise the appended code")
        bank.close()
        control = h.browser.new_page("https://login.example.com/login.html")
        check(sign_in_typed(control, "alice", ALICE + "123456"), "no Update offered for a changed password on a site that appends no code")
        control.close()

    def embedded_frame():
        # A payment processor's frame in a shop asks for a bank login: no save offer; a frame of a
        # site not in the data gets one.
        h.unlock()

        def submit_in_frame(url):
            page = h.browser.new_page(url)
            check(page.wait("document.getElementById('pay').contentWindow !== null"), "no frame")
            time.sleep(1.0)
            left, top = page.evaluate("(() => { const r = document.getElementById('pay').getBoundingClientRect(); return [r.left, r.top]; })()")
            for y, text in ((25, "payer"), (75, "Bank-Login-1")):
                page.click_at(left + 110, top + y)
                time.sleep(0.4)
                page.type_text(text)
                page.key("Escape", "Escape", 27)
            page.click_at(left + 110, top + 125)
            time.sleep(2.0)
            shown = page.evaluate("!!document.querySelector('coffer-save-bar')")
            page.close()
            return shown
        check(not submit_in_frame("https://shop.example.com/checkout-pay.html"), "a save was offered for a login typed into a payment processor's frame")
        states = [f.get("state") for f in h.frames("out") if "state" in f]
        asked = [(f.get("type"), f.get("topOrigin")) for f in h.frames("in") if "pay.example.net" in str(f.get("origin"))]
        check("embedded" in states, f"the host did not see the embedded frame: states {states}, the frame asked {asked}")
        check(submit_in_frame("https://shop.example.com/checkout-other.html"), "no save offered for a login typed into an ordinary frame")

    def cards_locked_and_timed():
        """A card chosen while locked asks pinentry once, then fills; the fill's time is measured."""
        h.lock()
        before = h.prompts()
        h.answers([MASTER])
        shop = h.browser.new_page("https://login.example.com/corpus/card-tokens-selects.html")
        items = h.open_list(shop, "#cc")
        text = shop.shadow_text("coffer-suggestions")
        check("🔒" in text and CARD_NAME in text and IDENTITY_NAME not in text, f"locked, the cards' names should show, marked: {text[-120:]!r}")
        check(h.prompts() == before, "listing the cards asked for the master password")
        shop.click_at(*items[0])
        check(shop.wait("document.getElementById('cc').value === '4111111111111111'", timeout=15), "pinentry's right password did not fill the card")
        check(h.prompts() == before + 1, "the right password should take one prompt")
        samples = []
        for _ in range(10):
            shop.navigate("https://login.example.com/corpus/card-tokens-selects.html")
            shop.click_at(*h.open_list(shop, "#cc")[0])
            check(shop.wait("document.documentElement.dataset.cofferFillMs !== undefined"), "the card was not filled")
            samples.append(float(shop.evaluate("document.documentElement.dataset.cofferFillMs")))
        check(h.prompts() == before + 1, "the session should answer without asking")
        requests = {f["id"]: f for f in h.frames("in")}
        host_share = [a["elapsedMs"] for a in h.frames("out") if requests.get(a.get("id"), {}).get("type") == "fillItem" and "elapsedMs" in a][-10:]
        h.timings["cardChoiceToFilledMs"] = {"median": round(statistics.median(samples), 2), "max": round(max(samples), 2), "runs": len(samples)}
        h.timings["hostFillItemMs"] = {"median": round(statistics.median(host_share), 3)} if host_share else None
        h.beside_target("cardChoiceToFilledMedianMs", statistics.median(samples), 50)
        shop.close()

    def card_in_processor_frame():
        """The card fields in a processor's frames (number, expiry and code each in one): the frame
        a person chose and its sibling frames of the same origin are filled; the shop's page and a
        frame of another origin get nothing, and the host is asked for that frame's origin only."""
        h.unlock()
        since = len(h.frames("in"))
        shop = h.browser.new_page("https://shop.example.com/card-shop.html")
        child = h.target("iframe", lambda url: "pay.example.net/card-frame.html" in url, "the processor's frame did not load")
        frame = CDPPage(h.browser, child["targetId"], h.browser.attach(child["targetId"]))
        check(frame.wait("document.readyState === 'complete'"), "the frame did not finish loading")
        time.sleep(0.5)
        left, top = shop.evaluate("(() => { const r = document.getElementById('pay').getBoundingClientRect(); return [r.left, r.top]; })()")
        shop.click_at(left + 110, top + 25)
        check(frame.wait("!!document.querySelector('coffer-suggestions')", timeout=5), "no list in the frame")
        time.sleep(0.8)
        check(frame.shadow_text("coffer-suggestions").count("•") == 0, "the list should hold only the test's card")
        x, y = frame.shadow_items("coffer-suggestions", "item")[0]
        shop.click_at(left + x, top + y)
        frame.wait("document.getElementById('cc').value !== ''")
        check(frame.evaluate("document.getElementById('cc').value") == "4111111111111111", "the frame's card number was not filled")

        def frame_page(url_part):
            target = next(t for t in h.browser.targets() if t["type"] == "iframe" and url_part in t["url"])
            return CDPPage(h.browser, target["targetId"], h.browser.attach(target["targetId"]))
        # The processor's other frames (its origin) are filled; the shop and another origin's frame are not.
        check(frame_page("pay.example.net/exp-frame").wait("document.getElementById('exp').value === '07/29'"), "the processor's expiry frame was not filled")
        check(frame_page("pay.example.net/cvc-frame").wait("document.getElementById('cvc').value === '123'"), "the processor's code frame was not filled")
        time.sleep(0.3)
        check(shop.evaluate("document.getElementById('name').value") == "", "the shop's page got the cardholder")
        check(frame_page("cvc.example.net").evaluate("document.getElementById('cvc').value") == "", "a sibling frame of another origin got the code")
        origins = {f.get("origin") for f in h.frames("in")[since:] if f.get("type") == "fillItem"}
        check(origins == {"https://pay.example.net"}, f"the card went to another origin: {origins}")
        shop.close()

    def card_saved_after_checkout():
        """A card typed into a checkout is offered for saving on the next page; saved without its
        code unless the box is ticked; a card Coffer filled is offered no save."""
        h.unlock()
        shop = h.browser.new_page("https://shop.example.com/card-checkout.html")
        for selector, text in (("#cc", "5555 4444 3333 1111"), ("#exp", "12/30"), ("#cvc", "321")):
            shop.click(selector)
            time.sleep(0.3)
            shop.key("Escape", "Escape", 27)
            shop.type_text(text)
        shop.click("#pay")
        check(shop.wait("location.pathname === '/welcome' && document.readyState === 'complete'", timeout=10), "the checkout was not submitted")
        check(shop.wait("!!document.querySelector('coffer-card-save-bar')", timeout=8), "no card save bar after the checkout")
        text = shop.shadow_text("coffer-card-save-bar")
        check("Mastercard •••• 1111" in text and "5555" not in text, f"the bar should name the card by its last digits: {text!r}")
        shop.click_at(*shop.shadow_items("coffer-card-save-bar", "primary")[0])
        time.sleep(1.0)
        code, out, err = h.coffer("show", "Mastercard •••• 1111", "--json", "--password-stdin", stdin=MASTER + "\n")
        check(code == 0, f"the card was not saved: {err}")
        kept = json.loads(out).get("card") or {}
        check(kept.get("number") == "5555444433331111" and kept.get("expiryMonth") == 12 and kept.get("expiryYear") == 2030,
              f"the card was not kept as typed: {kept}")
        check(kept.get("code", "") == "", "the security code was kept though the box was not ticked")
        # A card Coffer filled is no new card.
        shop.navigate("https://shop.example.com/card-checkout.html")
        shop.click_at(*h.open_list(shop, "#cc")[0])
        check(shop.wait("document.getElementById('cc').value !== ''"), "the chosen card was not filled")
        shop.click("#pay")
        check(shop.wait("location.pathname === '/welcome' && document.readyState === 'complete'", timeout=10), "the checkout was not submitted")
        time.sleep(1.5)
        check(shop.evaluate("document.querySelector('coffer-card-save-bar') === null"), "a card Coffer filled was offered for saving")
        shop.close()
        # The saved card goes, so that the later cases' lists hold the one card they expect.
        code, _, err = h.coffer("rm", "Mastercard •••• 1111", "--force", "--password-stdin", stdin=MASTER + "\n")
        check(code == 0, f"the saved card could not be removed: {err}")

    def insert_text():
        """"Insert from Coffer…" on a field: the chooser finds the card by name, names its values,
        and the chosen one lands at the caret of the field that was right-clicked; the host is told
        no page, and the chooser never holds the value."""
        h.unlock()
        url = "https://login.example.com/corpus/contact-form.html"
        form = h.browser.new_page(url)
        form.click("#msg")
        form.type_text("Card: ")
        h.in_worker(f"(async () => {{ const [tab] = await chrome.tabs.query({{url: {json.dumps(url + '*')}}});"
                    " await cofferInsertMenu({menuItemId: 'coffer-insert', frameId: 0}, tab); })()")
        chooser_target = h.target("page", lambda url: "/insert.html#" in url, "the chooser did not open")
        chooser = CDPPage(h.browser, chooser_target["targetId"], h.browser.attach(chooser_target["targetId"]))
        check(chooser.wait("document.querySelectorAll('#items button').length > 0"), "the chooser lists no item")
        chooser.click("#query")
        chooser.type_text("travel")
        check(chooser.wait("document.querySelectorAll('#items button').length === 1"), "the search did not narrow the items")
        check(CARD_NAME in chooser.evaluate("document.getElementById('items').textContent"), "the card is not the item found")
        chooser.click("#items button")
        check(chooser.wait("!document.getElementById('members-step').hidden"), "the card's values were not listed")
        labels = chooser.evaluate("[...document.querySelectorAll('#members button')].map((b) => b.textContent)")
        check(labels[:2] == ["cardholder", "number (secret)"] and "4111" not in "".join(labels), f"the values should be named, never shown: {labels}")
        chooser.click("#members li:nth-child(2) button")
        check(form.wait("document.getElementById('msg').value === 'Card: 4111111111111111'"), "the number was not inserted at the caret")
        inserted = [f for f in h.frames("in") if f.get("type") == "insertText"]
        check(inserted and all("origin" not in f for f in inserted), "the host was told the page")
        form.close()

    # ---- The vault page (SPEC §13.7) ----

    def vault_page():
        """The vault page, as a person uses it: opened from the toolbar's menu, every kind created
        through its form and seen by `coffer show`, an edit, an edit from the CLI appearing in the
        open page, the code `coffer otp` prints, a conflict told and chosen, a delete, and a lock
        from the CLI hiding every secret; axe finds no serious or critical violation on any view."""
        h.unlock()
        vp = open_vault_page()
        audit(vp, "the list")
        created = [
            ("login", "Vault login", [("#edit-user", "vera"), ("#edit-password", "VeraPw-1"), ("#edit-sites", "https://vault.example.com"),
                                      ("#edit-otp", "JBSWY3DPEHPK3PXP")], ["vera", "VeraPw-1", "https://vault.example.com"]),
            ("note", "Vault note", [("#edit-notes", "the boiler's code is 4711")], ["4711"]),
            ("card", "Vault card", [("#member-number", "5555 4444 3333 1111"), ("#member-expiry", "09/31"), ("#edit-tags", "travel, work")],
             ["5555444433331111", "09/2031", "travel, work"]),
            ("identity", "Vault identity", [("#member-given-name", "Vera"), ("#member-country", "Norway"), ("#edit-tags", "travel")],
             ["Vera", "country: NO"]),
            ("ssh-key", "Vault key", [("field", "publicKey", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOv vera")], ["ssh-ed25519"]),
            ("secret", "Vault secret", [("#edit-password", "s3cret-value")], ["s3cret-value"]),
        ]
        for kind, name, inputs, shown in created:
            press(vp, "#new")
            check(vp.wait("document.getElementById('edit-name') !== null"), "the New item form did not open")
            if kind != "login":
                choose(vp, "#edit-kind", kind)
                check(vp.wait("document.getElementById('edit-name') !== null"), f"the form for a {kind} did not open")
            type_into(vp, "#edit-name", name)
            for entry in inputs:
                if entry[0] == "field":
                    press(vp, "#add-field")
                    type_into(vp, "#edit-fields .field-row:last-of-type .field-name", entry[1])
                    type_into(vp, "#edit-fields .field-row:last-of-type .field-value", entry[2])
                else:
                    type_into(vp, entry[0], entry[1])
            if kind == "card":
                audit(vp, "a card's form")
                vp.screenshot(os.path.join(h.out, "vault-edit.png"))
            press(vp, "#save")
            check(vp.wait(f"document.getElementById('detail-title').textContent === {json.dumps(name)}"),
                  f"the {kind} was not saved: {vp.evaluate('document.getElementById(`edit-error`)?.textContent')}")
            shown_text = vp.evaluate("document.getElementById('detail-body').innerText")
            check(not re.search(r"null|undefined|NaN", shown_text), f"the {kind}'s view shows a missing value as text: {shown_text}")
            code, out, err = h.coffer("show", name)
            check(code == 0 and all(text in out for text in shown), f"coffer show {name}: {out} {err}")
        audit(vp, "an item")

        # Tags and dates, from the index while nothing is opened: the tag filter offers the vault's
        # tags and keeps the items carrying one; sorted by last modified, the item changed last
        # (here by the CLI, a second later than anything else) comes first, with its date.
        listed = ("[...document.querySelectorAll('#list [role=option]')].sort((a, b) => a.getAttribute('aria-posinset') - b.getAttribute('aria-posinset'))"
                  ".map((n) => n.querySelector('.title').textContent)")
        search(vp, "Vault")
        check(vp.wait("['travel', 'work'].every((t) => [...document.getElementById('tag').options].some((o) => o.value === t))"),
              f"the tag filter does not offer the vault's tags: {vp.evaluate('document.getElementById(`tag`).innerText')}")
        choose(vp, "#tag", "travel")
        check(vp.wait(f"{listed}.join() === 'Vault card,Vault identity'"), f"the tag filter kept {vp.evaluate(listed)}")
        check(vp.evaluate("document.querySelector('#list [role=option] .sub').textContent.includes('#travel')"), "a row does not show its tags")
        choose(vp, "#tag", "")
        time.sleep(1.1)
        check(h.coffer("edit", "Vault note", "--user", "changed-last")[0] == 0, "coffer edit failed")
        choose(vp, "#sort", "modified")
        check(vp.wait(f"{listed}[0] === 'Vault note'"), f"sorted by last modified: {vp.evaluate(listed)}")
        check(vp.evaluate("document.querySelector('#list [role=option] .sub').textContent.includes('changed ')"), "no date shown when sorted by it")
        vp.screenshot(os.path.join(h.out, "vault-list.png"))
        choose(vp, "#sort", "name")

        # By keyboard alone: Tab from the search box reaches the list; ArrowDown and Enter open an item.
        search(vp, "Vault card")
        for _ in range(8):
            if vp.evaluate("document.activeElement?.id") == "list":
                break
            vp.key("Tab", "Tab", 9)
        check(vp.evaluate("document.activeElement?.id") == "list", "Tab never reached the list")
        vp.key("ArrowDown", "ArrowDown", 40)
        vp.key("Enter", "Enter", 13)
        check(vp.wait("document.getElementById('detail-title').textContent === 'Vault card' && document.activeElement?.id === 'detail'"),
              "ArrowDown and Enter did not open the item and move there")

        # An edit through the page; then one through the CLI appears in the open page.
        search(vp, "Vault login")
        press(vp, "#list [role=option]")
        check(vp.wait("document.getElementById('detail-title').textContent === 'Vault login'"), "the login did not open")
        vp.screenshot(os.path.join(h.out, "vault-item.png"))
        # Copy puts the password on the clipboard, and the extension clears it after the host's
        # delay ($COFFER_CLIP_TIME, 2 s here; the CLI's 45 by default) even when the page that
        # copied is closed at once: a second vault page copies, and is closed. Chromium's worker
        # clears it through its offscreen document, Firefox's event page itself (clipboard.js);
        # the test reads it as an extension page may in Chromium, with Firefox's own code there.
        if h.kind == "chromium":
            h.browser.call("Browser.grantPermissions", {"permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"],
                                                        "origin": f"chrome-extension://{EXTENSION_ID}"})
            other = h.browser.new_page(f"chrome-extension://{EXTENSION_ID}/vault.html")
            focused = [other]  # a page reads the clipboard only while it has the focus
            clipboard = lambda: focused[0].evaluate("navigator.clipboard.readText()", await_promise=True)
        else:
            other = firefox_address_bar(f"moz-extension://{FIREFOX_EXTENSION_UUID}/vault.html")
            clipboard = firefox_clipboard
        search(other, "Vault login")
        press(other, "#list [role=option]")
        check(other.wait("document.getElementById('detail-title').textContent === 'Vault login'"), "the login did not open in the second page")
        press(other, "[aria-label='Copy password']")
        check(clipboard_becomes(clipboard, "VeraPw-1", 3), f"Copy did not put the password on the clipboard: {clipboard()!r}")
        check(other.wait("document.getElementById('message').textContent.includes('cleared in 2 seconds')"), "the delay is not told")
        other.close()
        if h.kind == "chromium":
            h.browser.call("Target.activateTarget", {"targetId": vp.target})
            focused[0] = vp
        check(clipboard_becomes(clipboard, "", 6), "the clipboard was not cleared after the delay once the page that copied had closed")
        press(vp, "#edit")
        type_into(vp, "#edit-user", "vera2", replace=True)
        press(vp, "#save")
        check(vp.wait("document.querySelector('#detail-body dl')?.textContent.includes('vera2')"), "the edited user is not shown")
        check("vera2" in h.coffer("show", "Vault login")[1], "coffer show does not see the page's edit")
        check(h.coffer("edit", "Vault login", "--user", "from-the-cli")[0] == 0, "coffer edit failed")
        check(vp.wait("document.querySelector('#detail-body dl')?.textContent.includes('from-the-cli')", timeout=5),
              "an edit from the CLI did not appear in the open page")

        # The code on the page is what `coffer otp` prints at that moment.
        for _ in range(3):
            check(vp.wait("/^[0-9]{6}$/.test(document.getElementById('otp-code')?.textContent ?? '')"), "no one-time code shown")
            shown_code = vp.evaluate("document.getElementById('otp-code').textContent")
            cli_code = h.coffer("otp", "Vault login")[1].strip()
            if shown_code == cli_code or vp.evaluate("document.getElementById('otp-code').textContent") == cli_code:
                break
        check(shown_code == cli_code or vp.evaluate("document.getElementById('otp-code').textContent") == cli_code,
              f"the page's code {shown_code} is not coffer otp's {cli_code}")
        check(vp.evaluate("/^[0-9]+ s left$/.test(document.getElementById('otp-left').textContent)"), "no countdown")

        # A conflict: the CLI saves while the page edits; the page's save shows both, nothing lost.
        press(vp, "#edit")
        type_into(vp, "#edit-notes", "my note")
        check(h.coffer("edit", "Vault login", "--user", "cli-again")[0] == 0, "coffer edit failed")
        press(vp, "#save")
        check(vp.wait("document.getElementById('conflict').open"), "the conflict was not shown")
        rows = vp.evaluate("document.getElementById('conflict-rows').textContent")
        check("cli-again" in rows and "from-the-cli" in rows, f"the conflict does not show both users: {rows}")
        audit(vp, "the conflict dialog")
        vp.screenshot(os.path.join(h.out, "vault-conflict.png"))
        press(vp, "#take-theirs")
        check(vp.wait("document.querySelector('#detail-body dl')?.textContent.includes('cli-again')"), "the vault's version is not shown")
        check("my note" not in h.coffer("show", "Vault login")[1], "the page's edit was written over the other")

        # The audit: coffer audit's findings, each opening its item.
        press(vp, "#audit")
        check(vp.wait("[...document.querySelectorAll('#detail-body h3')].some((h) => h.textContent.startsWith('Weak'))"), "the audit shows no weak login")
        check(vp.evaluate("document.getElementById('detail-body').textContent.includes('breaches not checked')"), "breaches were checked unasked")
        audit(vp, "the audit view")
        vp.screenshot(os.path.join(h.out, "vault-audit.png"))
        first = vp.evaluate("document.querySelector('.findings li button').getAttribute('aria-label').slice('Open '.length)")
        press(vp, ".findings li button")
        check(vp.wait(f"document.getElementById('detail-title').textContent === {json.dumps(first)}"), "a finding did not open its item")

        # An attachment: a file chosen in the page's file dialog is added (`coffer show` lists it),
        # then saved from the page into the Downloads folder (the browser's home has one, as a desktop does).
        for home in (h.root + "/chromium-home", h.env["HOME"]):
            os.makedirs(home + "/Downloads", exist_ok=True)
        with open(h.root + "/receipt.txt", "w") as f:
            f.write("paid in full\n")
        search(vp, "Vault secret")
        press(vp, "#list [role=option]")
        check(vp.wait("document.getElementById('detail-title').textContent === 'Vault secret'"), "the secret did not open")
        vp.choose_file("#add-attachment", h.root + "/receipt.txt")
        check(vp.wait("document.querySelector(\"[aria-label='Save receipt.txt to Downloads']\") !== null"),
              f"the chosen file is not shown: {vp.evaluate('document.getElementById(`detail`).innerText')} {vp.evaluate('document.getElementById(`message`).textContent')}")
        check("receipt.txt" in h.coffer("attachment", "list", "Vault secret")[1], f"coffer does not list the page's attachment: {h.coffer('attachment', 'list', 'Vault secret')}")
        press(vp, "[aria-label='Save receipt.txt to Downloads']")
        message = "document.getElementById('message').textContent"
        check(vp.wait(message + ".startsWith('Saved as ')"), f"the attachment was not saved: {vp.evaluate(message)}")
        saved = vp.evaluate(message)[len("Saved as "):]
        check(saved.endswith("/Downloads/receipt.txt") and open(saved).read() == "paid in full\n", f"the saved file differs: {saved}")
        # A file over what one message carries (512 KiB) goes in parts and arrives whole.
        scan = os.urandom(2 * 1024 * 1024 + 12345)
        with open(h.root + "/scan.bin", "wb") as f:
            f.write(scan)
        vp.choose_file("#add-attachment", h.root + "/scan.bin")
        check(vp.wait(message + " === 'Added scan.bin.'", timeout=20), f"the large file was not added: {vp.evaluate(message)}")
        code, _, err = h.coffer("attachment", "get", "Vault secret", "scan.bin", "-o", h.root + "/scan.out")
        check(code == 0 and open(h.root + "/scan.out", "rb").read() == scan, f"the large file differs in coffer: {err}")

        # Delete, through the page's own confirmation.
        search(vp, "Vault note")
        press(vp, "#list [role=option]")
        check(vp.wait("document.getElementById('detail-title').textContent === 'Vault note'"), "the note did not open")
        press(vp, "#delete")
        check(vp.wait("document.getElementById('confirm-delete').open"), "no confirmation")
        press(vp, "#confirm-delete-yes")
        check(vp.wait("document.getElementById('message').textContent === 'Deleted.'"), "not deleted")
        check(h.coffer("show", "Vault note")[0] != 0, "coffer show still finds the deleted note")

        # A lock from the CLI hides every secret within a second.
        search(vp, "Vault login")
        press(vp, "#list [role=option]")
        check(vp.wait("document.getElementById('detail-title').textContent === 'Vault login'"), "the login did not open")
        press(vp, "[aria-label='Reveal password']")
        check(vp.wait("document.body.innerText.includes('VeraPw-1')"), "Reveal did not show the password")
        h.lock()
        check(vp.wait("!document.body.innerText.includes('VeraPw-1') && !document.getElementById('unlock').hidden", timeout=2),
              "a lock from the CLI did not hide the password within a second or two")
        check(not vp.evaluate("document.body.innerHTML.includes('VeraPw-1')"), "the password stayed in the page")
        audit(vp, "the locked page")
        vp.screenshot(os.path.join(h.out, "vault-locked.png"))
        h.unlock()
        check(vp.wait("document.getElementById('unlock').hidden"), "the page did not follow the unlock")
        for _, name, _, _ in created:
            if name != "Vault note":
                h.coffer("rm", name, "--force")
        vp.close()

    def vault_page_refuses_content_scripts():
        """A content script (what a page that took one over controls) asking for a vault request
        is refused by the service worker; the host is never asked."""
        tab = h.browser.new_page("https://login.example.com/login.html")
        before = len([f for f in h.frames("in") if str(f.get("type", "")).startswith("vault")])
        answers = content_script_evaluate(tab, "Promise.all(['vaultItems', 'vaultItem', 'vaultSave', 'vaultDelete', 'vaultCode', 'vaultAudit', 'attachmentAdd', 'attachmentPart', 'attachmentSave', 'unlock']"
                                               ".map((type) => chrome.runtime.sendMessage({type, recordIdentifier: '00', item: {kind: 'note'}})))")
        check(answers and all(a.get("ok") is False and a["error"]["code"] == "forbidden" for a in answers), f"a content script was answered: {answers}")
        check(len([f for f in h.frames("in") if str(f.get("type", "")).startswith("vault")]) == before, "the host was asked")
        tab.close()

    def vault_page_at_ten_thousand():
        """Search as you type at 10,000 items: the list shows the one item a name finds, and the
        first rows of the whole list; the host's share of each request is in the results."""
        bulk = h.root + "/bulk.csv"
        with open(bulk, "w") as f:
            f.write("name,url,username,password\n" + "".join(f"site{n},https://site{n}.bulk.test,user{n},Pw-{n}-x\n" for n in range(args.bulk)))
        code, _, err = h.coffer("import", bulk, "--format", "chrome")
        check(code == 0, f"the import failed: {err}")
        since = len(h.frames("out"))
        vp = open_vault_page()
        check(vp.wait(f"parseInt(document.getElementById('count').textContent.slice(1)) >= {args.bulk}"), f"the list does not count {args.bulk} items")
        h.beside_target(f"vault page: first rows at {args.bulk} items, ms after the click", first_rows_after_click(vp), 150)
        search(vp, "site7777.")
        check(vp.wait("document.querySelectorAll('#list [role=option]').length === 1"), "the search found more than the one item")
        check("site7777.bulk.test" in vp.evaluate("document.querySelector('#list [role=option]').textContent"), "the search did not find the item")
        took = [f.get("elapsedMs", 0) for f in h.frames("out")[since:] if "total" in f]
        # Again, as a person opens it a second time: the host has its table.
        vp.close()
        again = open_vault_page()
        h.beside_target(f"vault page: first rows at {args.bulk} items, opened again, ms after the click", first_rows_after_click(again), 150)
        # Again after an edit elsewhere, a moment later: the host built its table again between
        # requests (SPEC.md §13.7), so the page does not wait for it.
        listed = again.evaluate("parseInt(document.getElementById('count').textContent.slice(1))")
        again.close()
        one = h.root + "/one.csv"
        with open(one, "w") as f:
            f.write("name,url,username,password\nafter-import,https://after.bulk.test,later,Pw-later-x\n")
        code, _, err = h.coffer("import", one, "--format", "chrome")
        check(code == 0, f"the second import failed: {err}")
        time.sleep(1.5)
        vp = open_vault_page()
        check(vp.wait(f"parseInt(document.getElementById('count').textContent.slice(1)) === {listed + 1}"), "the edit elsewhere is not listed")
        h.beside_target(f"vault page: first rows at {args.bulk} items, opened after an edit elsewhere, ms after the click", first_rows_after_click(vp), 150)
        if len(took) > 1:
            # The first builds the host's table of the vault (kept until the vault changes); the rest read it.
            h.beside_target(f"vault page opening at {args.bulk} items, host ms", took[0], 150)
            h.beside_target(f"vault page search keystroke at {args.bulk} items, host ms (max)", max(took[1:]), 20)
        vp.close()

    def form_corpus():
        """Every shape of Tests/Browser/corpus, each on its own; the failures are listed together."""
        failures = []
        shapes = sorted(f for f in os.listdir(CORPUS) if f.endswith(".html"))
        corpus_page = h.browser.new_page("about:blank")
        for name in shapes:
            try:
                h.corpus_shape(corpus_page, name)
            except Exception as error:  # noqa: BLE001 - every shape is tried
                failures.append(f"{name}: {type(error).__name__}: {error}")
        corpus_page.close()
        h.timings["corpusShapes"] = len(shapes)
        check(not failures, f"{len(failures)} of {len(shapes)} form shapes: " + "; ".join(failures))

    # ---- Passkeys: Coffer as the authenticator, fido2's Fido2Server as the relying party ----
    # The cases run in this order and build on one another (the first registers the passkey the
    # later ones sign with): run them together (`--only passkey`).

    AAGUID = "37daade0720d4806ad1a639b44632d1e"
    RP = "https://passkeys.example.com"

    # ---- helpers of the vault page's cases ----

    def open_vault_page():
        """The vault page as a person opens it: Chromium, through the worker's handler of the
        toolbar's "Open vault"; Firefox, by its keyboard shortcut (Alt+Shift+V), as the
        browser window's key for it runs the command. Either way the worker asks for the first
        rows at that moment; `clicked_at` is when (ms since the epoch)."""
        clicked_at = time.time() * 1000
        if h.kind == "chromium":
            h.in_worker("cofferOpenVault()")
            target = h.target("page", lambda url: url.endswith("/vault.html"), "Open vault opened no page")
            vp = CDPPage(h.browser, target["targetId"], h.browser.attach(target["targetId"]))
        else:
            vp = firefox_shortcut("V", "moz-extension://" + FIREFOX_EXTENSION_UUID + "/vault.html")
        vp.clicked_at = clicked_at
        check(vp.wait("document.querySelectorAll('#list [role=option]').length > 0"), "the vault page lists nothing")
        return vp

    def first_rows_after_click(vp):
        """How long after the click the page showed its first rows, in ms (the page's own mark)."""
        check(vp.wait("performance.getEntriesByName('coffer-first-rows').length > 0"), "the page marked no first rows")
        return round(vp.evaluate("performance.timeOrigin + performance.getEntriesByName('coffer-first-rows')[0].startTime") - vp.clicked_at, 1)

    def firefox_shortcut(key, url):
        """Presses the extension's keyboard shortcut for `key` (Alt+Shift+`key`): the browser
        window's own key element for it runs the command, as the keystroke does. Returns the tab
        at `url` it opened or brought forward."""
        return firefox_window_opens(
            f"document.querySelector('keyset[id^=ext-keyset-id-coffer] key[key={key}][modifiers=\"alt,shift\"]').doCommand(); true", url, reuse=True)

    def press(p, selector):
        """A click on what a person sees: once it is there (a list being read again after a change
        shows its rows a moment later), scrolled into view first, as a person scrolls to it."""
        check(p.wait(f"document.querySelector({json.dumps(selector)}) !== null"), f"{selector} never appeared")
        p.evaluate(f"document.querySelector({json.dumps(selector)}).scrollIntoView({{block: 'center'}})")
        p.click(selector)

    def clipboard_becomes(read, text, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if read() == text:
                return True
            time.sleep(0.1)
        return False

    def firefox_clipboard():
        """The clipboard's text, as Firefox's own code reads it (the extension may only write it)."""
        windows = h.browser.call("browsingContext.getTree", {"moz:scope": "chrome"})["contexts"]
        return h.browser.call("script.evaluate", {
            "expression": "(() => { const t = Cc['@mozilla.org/widget/transferable;1'].createInstance(Ci.nsITransferable); t.init(null);"
                          " t.addDataFlavor('text/plain');"
                          " Services.clipboard.getData(t, Services.clipboard.kGlobalClipboard, window.browsingContext.currentWindowContext);"
                          " const d = {}; try { t.getTransferData('text/plain', d); } catch { return ''; }"
                          " return d.value.QueryInterface(Ci.nsISupportsString).data; })()",
            "target": {"context": windows[0]["context"]}, "awaitPromise": False})["result"].get("value")

    def firefox_address_bar(url):
        """A new tab with `url`, as typed into Firefox's address bar (the browser window's own
        code opens it, with the system's authority, as the address bar does)."""
        return firefox_window_opens(f"gBrowser.selectedTab = gBrowser.addTab({json.dumps(url)}, "
                                    "{triggeringPrincipal: Services.scriptSecurityManager.getSystemPrincipal()}); true", url)

    def firefox_window_opens(expression, url, reuse=False):
        """Runs `expression` in Firefox's browser window and returns the new tab at `url` it
        opened, or with `reuse` the one it brought forward when it opened none."""
        windows = h.browser.call("browsingContext.getTree", {"moz:scope": "chrome"})["contexts"]
        before = {c["context"] for c in h.browser.call("browsingContext.getTree", {})["contexts"]}
        h.browser.call("script.evaluate", {"expression": expression, "target": {"context": windows[0]["context"]}, "awaitPromise": False})
        for _ in range(200):
            found = sorted((c for c in h.browser.call("browsingContext.getTree", {})["contexts"]
                            if c["url"] == url and (reuse or c["context"] not in before)), key=lambda c: c["context"] in before)  # a new tab first
            if found:
                page = bidi.Page(h.browser, found[0]["context"])
                page.wait("document.readyState === 'complete'")
                return page
            time.sleep(0.05)
        raise AssertionError(f"{url} did not open")

    def type_into(p, selector, text, replace=False):
        press(p, selector)
        if replace:
            p.evaluate(f"document.querySelector({json.dumps(selector)}).select()")  # as a triple-click selects the text
        p.type_text(text)

    def choose(p, selector, value):
        """Chooses an option of a <select> (a headless browser draws no popup to click in)."""
        p.evaluate(f"(() => {{ const s = document.querySelector({json.dumps(selector)}); s.focus(); s.value = {json.dumps(value)};"
                   " s.dispatchEvent(new Event('change', {bubbles: true})); })()")

    def search(p, text):
        type_into(p, "#query", text, replace=True)
        # Every row shown holds the text: the list before the search (which may begin with it) is gone.
        check(p.wait(f"[...document.querySelectorAll('#list [role=option]')].length >= 1 && document.getElementById('list').getAttribute('aria-busy') === 'false' && "
                     f"[...document.querySelectorAll('#list [role=option]')].every((n) => n.textContent.toLowerCase().includes({json.dumps(text.lower())}))"),
              f"the search for {text} found nothing")

    axe_source = open(args.axe).read() if os.path.exists(args.axe) else None

    def audit(p, view):
        """axe-core on the page as it is: no serious or critical violation."""
        check(axe_source, f"axe.min.js is missing at {args.axe} (scripts/fetch-axe)")
        if not p.evaluate("typeof axe !== 'undefined'"):
            p.evaluate(axe_source)
        found = p.evaluate("axe.run(document, {resultTypes: ['violations']}).then((r) => r.violations"
                           ".filter((v) => ['serious', 'critical'].includes(v.impact)).map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))",
                           await_promise=True)
        check(found == [], f"axe on {view}: {found}")

    def content_script_evaluate(p, expression):
        """Evaluates in the extension's content-script world of the page's top frame (Chromium)."""
        p.call("Runtime.enable")
        context = None
        deadline = time.time() + 5
        while time.time() < deadline and context is None:
            event = h.browser.wait_event("Runtime.executionContextCreated", session=p.session, timeout=5)
            description = event["params"]["context"]
            if description.get("auxData", {}).get("type") == "isolated" and EXTENSION_ID in description.get("origin", "") + description.get("name", "") \
                    or description.get("name") == "Coffer":
                context = description["id"]
        check(context, "no content-script world found")
        result = p.call("Runtime.evaluate", {"expression": expression, "contextId": context, "awaitPromise": True, "returnByValue": True})
        return result["result"].get("value")

    def sheet(p, timeout=5):
        """Waits for Coffer's passkey sheet, looks at it as a person would, and returns its buttons."""
        check(p.wait("!!document.querySelector('coffer-passkey-sheet')", timeout=timeout), "no passkey sheet appeared")
        time.sleep(0.7)
        return p.shadow_items("coffer-passkey-sheet", "option")

    def result(p, timeout=20):
        p.wait("document.getElementById('result').textContent !== ''", timeout=timeout)
        return p.evaluate("document.getElementById('result').textContent")

    def verdict(text, prefix):
        check(text.startswith(prefix), f"expected '{prefix}…', got {text!r}")
        return json.loads(text[len(prefix):])

    def host_requests(kind, since=0):
        return [f for f in h.frames("in")[since:] if f.get("type") == kind]

    def passkey_elapsed(kind):
        requests = {f["id"]: f.get("type") for f in h.frames("in")}
        return [a["elapsedMs"] for a in h.frames("out") if requests.get(a.get("id")) == kind and a.get("ok")]

    def passkey_register_sign_in_restart():
        p = h.browser.new_page(RP + "/passkeys.html")
        p.click("#register-es256")
        buttons = sheet(p)
        p.screenshot(os.path.join(h.out, f"passkey-create-{h.kind}.png"))
        text = p.shadow_text("coffer-passkey-sheet")
        check("Save a passkey for passkeys.example.com" in text and "alice@example.com" in text, f"the create sheet says {text!r}")
        p.click_at(*buttons[0])
        made = verdict(result(p), "registered ")
        check(made["alg"] == -7 and made["publicKeyAlgorithm"] == -7 and made["counter"] == 0 and made["aaguid"] == AAGUID,
              f"fido2 saw {made}")
        check(made["instance"] is True, "the page's credential is not a PublicKeyCredential")
        check(made["flags"] & 0x18 == 0x18, f"a synced passkey is backup eligible and backed up: flags {made['flags']}")
        rows = json.loads(h.coffer("list", "--json")[1])
        check(any(r["type"] == "passkey" and r["serviceIdentifier"]["identifier"] == "passkeys.example.com" for r in rows),
              f"coffer list shows no passkey: {rows}")
        for attempt in range(20 if h.kind == "chromium" else 1):
            p.click("#signin")
            buttons = sheet(p)
            if attempt == 0:
                p.screenshot(os.path.join(h.out, f"passkey-choose-{h.kind}.png"))
                check("alice@example.com" in p.shadow_text("coffer-passkey-sheet"), "the choose sheet does not name the account")
            p.evaluate("document.getElementById('result').textContent = ''; window.__clicked = performance.now()")
            p.click_at(*buttons[0])
            used = verdict(result(p), "signed in ")
            check(used["alg"] == -7 and used["counter"] == 0 and used["userHandle"] == used["expectedUserHandle"], f"fido2 saw {used}")
        samples = p.evaluate("window.__passkeyTiming")
        gets = passkey_elapsed("passkeyGet")
        h.timings["passkeyChoiceToResolvedMs"] = {"median": round(statistics.median(samples), 1), "max": round(max(samples), 1), "runs": len(samples)}
        h.timings["passkeyHostMs"] = {"create": passkey_elapsed("passkeyCreate"), "getMedian": round(statistics.median(gets), 3)}
        h.beside_target("passkeyChoiceToResolvedMedianMs", statistics.median(samples), 50)
        p.close()
        h.restart()
        again = h.browser.new_page(RP + "/passkeys.html")
        again.click("#signin")
        again.click_at(*sheet(again)[0])
        verdict(result(again), "signed in ")
        again.close()

    def passkey_eddsa():
        p = h.browser.new_page(RP + "/passkeys.html")
        p.click("#register-eddsa")
        p.click_at(*sheet(p)[0])
        made = verdict(result(p), "registered ")
        check(made["alg"] == -8 and made["publicKeyAlgorithm"] == -8, f"the relying party asked for EdDSA: {made}")
        # The relying party names only this credential: the sheet offers it alone, and it signs.
        p.evaluate("signIn({only: 'last'})")
        buttons = sheet(p)
        check(len(buttons) == 3, f"one passkey, another device, cancel: {len(buttons)} buttons")
        p.click_at(*buttons[0])
        check(verdict(result(p), "signed in ")["alg"] == -8, "the EdDSA passkey did not sign")
        p.close()

    def passkey_refusals():
        p = h.browser.new_page(RP + "/passkeys.html")
        before = len(h.frames("in"))
        # Another site's rpId: SecurityError, and no sheet to click.
        p.click("#register-other-rp")
        check(result(p).startswith("error SecurityError"), f"another site's rpId: {result(p)!r}")
        check(p.evaluate("document.querySelector('coffer-passkey-sheet') === null"), "a sheet was shown for another site's rpId")
        # excludeCredentials names the passkey the vault holds: InvalidStateError, nothing stored.
        count = len([r for r in json.loads(h.coffer("list", "--json")[1]) if r["type"] == "passkey"])
        p.click("#register-again")
        p.click_at(*sheet(p)[0])
        check(result(p).startswith("error InvalidStateError"), f"excludeCredentials: {result(p)!r}")
        check(len([r for r in json.loads(h.coffer("list", "--json")[1]) if r["type"] == "passkey"]) == count, "a passkey was stored anyway")
        # Cancel: NotAllowedError, nothing signed.
        p.click("#signin")
        p.click_at(*sheet(p)[-1])
        check(result(p).startswith("error NotAllowedError"), f"cancel: {result(p)!r}")
        check(not host_requests("passkeyGet", before), "a cancelled sign-in reached the host")
        # Only algorithms Coffer lacks: the browser's own flow, no sheet.
        before = len(h.frames("in"))
        p.evaluate("register({alg: -257})")
        time.sleep(1.5)
        check(p.evaluate("document.querySelector('coffer-passkey-sheet') === null"), "a sheet for RS256, which Coffer cannot make")
        check(not host_requests("passkeyCreate", before), "an RS256-only registration reached the host")
        p.close()

    def passkey_page_attacks():
        p = h.browser.new_page(RP + "/passkeys.html")
        before = len(h.frames("in"))
        # Malformed options are the page's own errors, before anything is shown or asked.
        malformed = p.evaluate("""(async () => {
            const user = (id) => ({ id, name: 'a', displayName: 'A' });
            const base = { rp: { name: 'x' }, pubKeyCredParams: [{ type: 'public-key', alg: -7 }] };
            const tries = [
                { ...base, challenge: 'not a buffer', user: user(new Uint8Array(8)) },
                { ...base, challenge: new Uint8Array(32), user: user(new Uint8Array(65)) },
                { ...base, challenge: new Uint8Array(32), user: user(new Uint8Array(8)), rp: { id: '', name: 'x' } },
            ];
            const names = [];
            for (const publicKey of tries) {
                try { await navigator.credentials.create({ publicKey }); names.push('resolved'); } catch (error) { names.push(error.name); }
            }
            return names.join(','); })()""", await_promise=True)
        check(malformed == "TypeError,TypeError,SecurityError", f"malformed options gave {malformed}")
        check(p.evaluate("document.querySelector('coffer-passkey-sheet') === null"), "a sheet was shown for malformed options")
        # get() without a user gesture, and a forged request event: the sheet may show, but
        # nothing signs until a person clicks it; the page cannot reach into it or click it.
        p.evaluate("signIn({})")
        p.evaluate("""dispatchEvent(new CustomEvent('coffer-webauthn-request', { detail: JSON.stringify({ id: 'forged', kind: 'get',
            challenge: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', rpId: 'passkeys.example.com', allowCredentials: [] }) }))""")
        sheet(p)
        p.evaluate("""(() => { const host = document.querySelector('coffer-passkey-sheet');
            host.click(); host.dispatchEvent(new MouseEvent('click', { bubbles: true, composed: true }));
            window.__reach = String(host.shadowRoot); })()""")
        time.sleep(1.0)
        check(p.evaluate("window.__reach") == "null", "the page reached into the sheet")
        check(not host_requests("passkeyGet", before) and not host_requests("passkeyCreate", before), "a page's own events signed or made a passkey")
        # A frame of another site, not delegated: NotAllowedError, nothing asked of the host for it.
        framed = h.browser.new_page(RP + "/passkeys-framed.html")
        check(framed.wait("window.__frame !== ''", timeout=10), "the framed request never settled")
        check(framed.evaluate("window.__frame") == "frame NotAllowedError", f"a cross-origin frame got {framed.evaluate('window.__frame')!r}")
        check(not [f for f in h.frames("in")[before:] if f.get("origin") == "https://other.example.net"], "the frame's request reached the host")
        framed.close()
        p.close()

    def passkey_locked():
        p = h.browser.new_page(RP + "/passkeys.html")
        h.lock()
        before = h.prompts()
        h.answers(["CANCEL"])
        p.click("#signin")
        buttons = sheet(p)
        check("locked" in p.shadow_text("coffer-passkey-sheet"), "the sheet does not say Coffer is locked")
        p.click_at(*buttons[0])
        check(result(p).startswith("error NotAllowedError"), f"pinentry cancelled: {result(p)!r}")
        h.answers([MASTER])
        p.click("#signin-required")
        p.click_at(*sheet(p)[0])
        used = verdict(result(p), "signed in ")
        check(used["flags"] & 0x04, f"the master password was just proven: UV expected, flags {used['flags']}")
        check(h.prompts() == before + 2, f"one prompt each: {h.prompts() - before}")
        p.close()

    def passkey_conditional():
        p = h.browser.new_page(RP + "/passkeys.html?conditional")
        time.sleep(0.5)
        items = h.open_list(p)
        check("passkey for passkeys.example.com" in p.shadow_text("coffer-suggestions"), "no passkey in the inline list")
        p.screenshot(os.path.join(h.out, f"passkey-inline-{h.kind}.png"))
        p.click_at(*items[0])
        verdict(result(p), "signed in ")
        p.close()

    # ---- Passkey upgrades and signals (issue 56): a site of its own, upgrade.example.com ----
    UP = "https://upgrade.example.com"
    UP_USER, UP_PASSWORD = "alice@example.com", "Upgrade-pw-1"

    def upgrade_passkeys():
        return [r for r in json.loads(h.coffer("list", "--json")[1])
                if r["type"] == "passkey" and r["serviceIdentifier"]["identifier"] == "upgrade.example.com"]

    def sign_in_with_password(p):
        """A person's password sign-in through Coffer: the list under the field, a click, then Sign in."""
        p.click_at(*h.open_list(p)[0])
        check(p.wait(f"document.getElementById('password').value === {json.dumps(UP_PASSWORD)}", timeout=5), "Coffer did not fill the login")
        p.evaluate("document.getElementById('result').textContent = ''")
        p.click("#signin-password")
        return result(p)

    def passkey_upgrade():
        assert h.coffer("add", UP + "/", UP_USER, "--password-stdin", stdin=f"{MASTER}\n{UP_PASSWORD}\n")[0] == 0
        before = len(h.frames("in"))
        p = h.browser.new_page(UP + "/upgrade.html")
        # No login filled by Coffer in this tab: refused as browsers refuse, no sheet, nothing stored.
        p.evaluate("upgrade()")
        check(result(p).startswith("error NotAllowedError"), f"an upgrade without a Coffer fill: {result(p)!r}")
        check(not host_requests("passkeyCreate", before), "an upgrade without a fill reached the host")
        # Filled, then locked: refused, and no pinentry (a page cannot make Coffer prompt).
        h.unlock()
        p.click_at(*h.open_list(p)[0])
        check(p.wait(f"document.getElementById('password').value === {json.dumps(UP_PASSWORD)}", timeout=5), "Coffer did not fill the login")
        h.lock()
        prompts = h.prompts()
        p.evaluate("document.getElementById('result').textContent = ''")
        p.click("#signin-password")
        check(result(p).startswith("error NotAllowedError"), f"an upgrade while locked: {result(p)!r}")
        check(h.prompts() == prompts, "an upgrade asked for the master password")
        check(not upgrade_passkeys(), "a passkey was stored while locked")
        # Locked, Coffer could not tell whether the password changed, so it offers an update: "Not now".
        check(p.wait("!!document.querySelector('coffer-save-bar')", timeout=5), "no save bar after a submit while locked")
        time.sleep(0.6)
        p.click_at(*p.shadow_items("coffer-save-bar", "close")[0])
        check(p.wait("document.querySelector('coffer-save-bar') === null", timeout=5), "Not now left the save bar")
        h.unlock()
        # Filled and unlocked: the passkey joins the login, fido2 verifies it (no UP, no UV), the notice says so.
        made = verdict(sign_in_with_password(p), "upgraded ")
        check(made["flags"] & 0x05 == 0 and made["flags"] & 0x18 == 0x18, f"a conditional registration's flags: {made['flags']}")
        check(p.evaluate("document.querySelector('coffer-passkey-sheet') === null"), "an upgrade showed a sheet")
        check(p.wait("!!document.querySelector('coffer-passkey-notice')", timeout=5), "no notice of the added passkey")
        check("Coffer added a passkey for upgrade.example.com" in p.shadow_text("coffer-passkey-notice"), p.shadow_text("coffer-passkey-notice"))
        p.screenshot(os.path.join(h.out, f"passkey-upgrade-{h.kind}.png"))
        rows = upgrade_passkeys()
        check(len(rows) == 1 and rows[0]["user"] == UP_USER, f"the upgrade's passkey: {rows}")
        # Undo, clicked as a person: the passkey goes, the login and its password stay.
        time.sleep(0.6)
        p.click_at(*p.shadow_items("coffer-passkey-notice", "option")[0])
        deadline = time.time() + 5
        while upgrade_passkeys() and time.time() < deadline:
            time.sleep(0.1)
        check(not upgrade_passkeys(), "Undo left the passkey")
        check(UP_PASSWORD in h.coffer("show", "upgrade.example.com")[1], "Undo took the login's password too")
        # Again, and this time kept: a passkey sign-in fido2 accepts; a second upgrade is refused.
        # Undo's answer: "Passkey … removed", closed with its OK as a person closes it.
        check(p.wait("!!document.querySelector('coffer-passkey-notice')", timeout=5), "no notice that the passkey was removed")
        check("removed" in p.shadow_text("coffer-passkey-notice"), p.shadow_text("coffer-passkey-notice"))
        time.sleep(0.6)
        p.click_at(*p.shadow_items("coffer-passkey-notice", "primary")[0])
        check(p.wait("document.querySelector('coffer-passkey-notice') === null", timeout=5), "OK left the notice")
        verdict(sign_in_with_password(p), "upgraded ")
        h.timings["passkeyUpgradeHostMs"] = passkey_elapsed("passkeyCreate")[-1]
        h.beside_target("passkeyUpgradeHostMs", h.timings["passkeyUpgradeHostMs"], 20)
        p.close()
        q = h.browser.new_page(UP + "/upgrade.html")
        q.click("#signin")
        q.click_at(*sheet(q)[0])
        used = verdict(result(q), "signed in ")
        check(used["userHandle"] == used["expectedUserHandle"], f"signed in as {used}")
        check(sign_in_with_password(q).startswith("error NotAllowedError"), "a second upgrade for an account with a passkey")
        check(len(upgrade_passkeys()) == 1, "a second passkey was stored")
        q.close()

    def passkey_upgrade_from_a_frame():
        p = h.browser.new_page(UP + "/upgrade-framing.html")
        p.click_at(*h.open_list(p)[0])
        check(p.wait(f"document.getElementById('password').value === {json.dumps(UP_PASSWORD)}", timeout=5), "Coffer did not fill the login")
        before = len(h.frames("in"))
        p.evaluate("document.getElementById('child').contentWindow.postMessage('go', '*')")
        check(p.wait("window.__frame !== ''", timeout=10), "the frame's upgrade never settled")
        check(p.evaluate("window.__frame").startswith("frame error NotAllowedError"), f"a frame's upgrade: {p.evaluate('window.__frame')!r}")
        check(not host_requests("passkeyCreate", before), "a frame's upgrade reached the host")
        check(p.evaluate("document.querySelector('coffer-passkey-notice') === null"), "a notice for a refused upgrade")
        p.close()

    def passkey_signals():
        p = h.browser.new_page(UP + "/upgrade.html")
        signal = lambda what, extra="{}": p.evaluate(f"sendSignal({json.dumps(what)}, {extra})", await_promise=True)
        shown = lambda: h.coffer("show", "upgrade.example.com")[1]
        # Unknown credential: hidden (named so by show), offered nowhere, still in the record.
        check(signal("unknown") == "resolved", "signalUnknownCredential")
        check("hidden since" in shown() and not upgrade_passkeys(), f"an unknown credential: {shown()!r}")
        # All accepted names it: shown again.
        check(signal("accepted") == "resolved", "signalAllAcceptedCredentials")
        check("hidden since" not in shown() and len(upgrade_passkeys()) == 1, f"accepted again: {shown()!r}")
        # Current user details: the passkey's names change, the old one kept.
        check(signal("details") == "resolved", "signalCurrentUserDetails")
        check("alice.new@example.com" in shown() and "formerly alice@example.com" in shown(), f"renamed: {shown()!r}")
        # While locked: dropped, no prompt.
        h.lock()
        prompts = h.prompts()
        check(signal("unknown") == "resolved", "a signal while locked still resolves")
        h.unlock()
        check(h.prompts() == prompts and "hidden since" not in shown(), "a signal while locked changed the vault or prompted")
        # Another site's rpId: SecurityError, nothing changed; a malformed id: TypeError.
        check(signal("unknown", "{rpId: 'example.org'}") == "error SecurityError", "a forged rpId")
        check(signal("unknown", "{credentialId: 'not base64url!'}") == "error TypeError", "a malformed credential id")
        check("hidden since" not in shown(), "a refused signal changed the vault")
        # A flood: past five a minute for the rpId, signals are dropped — this unknown-credential one too.
        for _ in range(3):
            signal("details")
        check(signal("unknown") == "resolved" and "hidden since" not in shown(), "the rate limit let a sixth signal through")
        p.close()

    # (name, case, runs in Firefox too): the Chromium-only ones reach into the extension's
    # service worker or a frame's own target through the DevTools protocol.
    for name, function, both in [
        # First: it looks at the host the browser's start brought.
        ("the host starts with the browser and answers the vault page: no second start", host_runs_with_the_browser, True),
        ("the list appears on focus and a click fills", list_then_click, True), ("the list is keyboard-operable", keyboard, True),
        ("a sibling host gets suggestions but no silent fill", sibling, False),
        ("a cross-origin iframe gets none of the top page's logins", iframe, False),
        ("an http page gets nothing of an https login", plain_http, False),
        ("hidden, zero-sized and covered fields are never filled", hidden_fields, True),
        ("page scripts gain nothing", page_attacks, True), ("the keyboard command fills the host-level login", keyboard_command, False),
        ("click to filled within 50 ms (median of 20)", timing, True),
        ("locked: pinentry, wrong, cancel, and coffer lock", locked_with_pinentry, True),
        ("sign-up clicked and typed as a person: what was typed lands, then offered for saving, saved, suggested", save_new_login, True),
        ("a field's passwordrules, else the site's published rule, shapes the generated password", password_rules, True),
        ("clickjacking: a list the page hides with CSS or script releases nothing", clickjacking_hidden_list, True),
        ("clickjacking: a decoy in the top layer over the list releases nothing", clickjacking_decoy, True),
        ("fill on page load: https, unlocked, host-level only", fill_on_load, False),
        ("a sharing site's login is suggested, naming its site, and filled only when chosen", shared_site, True),
        ("a password with a code appended is no new password where the site asks for that", appended_code, True),
        # (Firefox's WebDriver BiDi here delivers no pointer input into a cross-site frame.)
        ("a payment processor's frame asking for a bank login gets no save offer", embedded_frame, False),
        ("every form shape of the corpus fills the fields a person means, or offers nothing", form_corpus, True),
        ("a card chosen while locked asks pinentry once, then fills (timed)", cards_locked_and_timed, True),
        ("a card typed into a checkout is offered for saving, its code only when ticked", card_saved_after_checkout, True),
        # (The chooser is driven through the worker: a headless browser shows no context menu.)
        ("Insert from Coffer: a chosen value lands at the caret, the page named nowhere", insert_text, False),
        # (Firefox's WebDriver BiDi here delivers no pointer input into a cross-site frame.)
        ("a card in a processor's frames fills those frames only", card_in_processor_frame, False),
        ("vault page: every kind created, edited, seen by the CLI; a CLI edit, the code, a conflict, delete, lock; axe clean",
         vault_page, True),
        ("vault page: a content script's vault requests are refused", vault_page_refuses_content_scripts, False),
        ("the host sends a password only in answer to a fill", only_fills_carry_passwords, True),
        ("passkey: the page's create() saves one in Coffer's sheet, fido2 verifies, sign-in works, again after a restart",
         passkey_register_sign_in_restart, True),
        ("passkey: EdDSA when the relying party asks for it", passkey_eddsa, True),
        ("passkey: another site's rpId, excludeCredentials, cancel and RS256-only are refused as WebAuthn says", passkey_refusals, True),
        ("passkey: page events and a cross-origin frame sign nothing", passkey_page_attacks, True),
        ("passkey: locked asks pinentry (cancel refuses; verification required sets UV)", passkey_locked, True),
        ("passkey: conditional mediation offers it under a 'username webauthn' field", passkey_conditional, True),
        ("passkey upgrade: after a Coffer fill, conditional create adds one without a sheet, fido2 verifies, Undo removes it; "
         "no fill, locked or a second one is refused", passkey_upgrade, True),
        ("passkey upgrade: a frame of the page that Coffer filled gets none", passkey_upgrade_from_a_frame, True),
        ("passkey signals: unknown hides, accepted shows again, details rename; locked, a forged rpId and a flood change nothing",
         passkey_signals, True),
        # Last: it leaves 10,000 items in the vault.
        ("vault page: search as you type at 10,000 items", vault_page_at_ten_thousand, True),
    ]:
        if (both or h.kind == "chromium") and (not args.only or args.only in name):
            h.case(name, function)
    summary = {"results": h.results, "timings": h.timings}
    with open(os.path.join(h.out, "results.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(h.timings))
    h.stop()
    return 0 if all(r["ok"] for r in h.results) else 1


if __name__ == "__main__":
    sys.exit(main())
