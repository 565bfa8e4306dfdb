"""A WebAuthn relying party for the browser cases, on the test site: its server side is Yubico's
fido2 library (Debian's python3-fido2, `Fido2Server`), so every registration and sign-in Coffer
makes is checked by an implementation that is not Coffer's — attestation object, client data,
origin, rpId hash, flags, signature and counter.

The page (PASSKEYS) runs the ceremony with its own JavaScript, as a site does: it fetches options
from /webauthn/*/begin, calls navigator.credentials.create/get, posts the result to
/webauthn/*/complete and shows what the server said in #result."""
import base64
import json
import threading

from fido2.client import ClientData
from fido2.ctap2 import AttestationObject, AuthenticatorData
from fido2.server import Fido2Server
from fido2.webauthn import PublicKeyCredentialParameters, PublicKeyCredentialRpEntity, PublicKeyCredentialType

PASSKEYS = """<!doctype html><html><head><meta charset="utf-8"><title>Passkeys</title>
<style>body{font:15px sans-serif;margin:40px} button{display:block;margin:8px 0;padding:6px 12px} input{padding:6px;width:240px}</style></head>
<body><h1>Example passkeys</h1>
<label>User <input id="username" autocomplete="username webauthn"></label>
<button id="register-es256" onclick="register({alg: -7})">Create a passkey (ES256)</button>
<button id="register-eddsa" onclick="register({alg: -8})">Create a passkey (EdDSA)</button>
<button id="register-again" onclick="register({alg: -7, exclude: true})">Create another (excluding mine)</button>
<button id="register-other-rp" onclick="register({alg: -7, rpId: 'example.org'})">Create one for example.org</button>
<button id="register-rsa" onclick="register({alg: -257})">Create a passkey (RS256 only)</button>
<button id="signin" onclick="signIn({})">Sign in with a passkey</button>
<button id="signin-required" onclick="signIn({uv: 'required'})">Sign in (verification required)</button>
<pre id="result"></pre>
<script>
  const b64 = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  const unb64 = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const show = (text) => { document.getElementById("result").textContent = text; };
  // From the press on Coffer's sheet (its events reach the page as presses on the sheet's host) to the resolved promise.
  let pressed = 0;
  window.__passkeyTiming = [];
  document.addEventListener("mousedown", () => { pressed = performance.now(); }, true);
  async function post(path, body) {
    const response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    return response.json();
  }
  async function register(wish) {
    show("");
    try {
      const options = await post("/webauthn/register/begin", wish);
      options.challenge = unb64(options.challenge);
      options.user.id = unb64(options.user.id);
      options.excludeCredentials = options.excludeCredentials.map((c) => ({ ...c, id: unb64(c.id) }));
      const made = await navigator.credentials.create({ publicKey: options });
      const verdict = await post("/webauthn/register/complete", {
        clientDataJSON: b64(made.response.clientDataJSON), attestationObject: b64(made.response.attestationObject),
        publicKeyAlgorithm: made.response.getPublicKeyAlgorithm(), instance: made instanceof PublicKeyCredential });
      show(verdict.ok ? "registered " + JSON.stringify(verdict) : "refused " + verdict.error);
    } catch (error) { show("error " + error.name + ": " + error.message); }
  }
  async function signIn(wish, mediation) {
    if (!mediation) show("");
    try {
      const options = await post("/webauthn/authenticate/begin", wish);
      options.challenge = unb64(options.challenge);
      options.allowCredentials = (options.allowCredentials ?? []).map((c) => ({ ...c, id: unb64(c.id) }));
      const used = await navigator.credentials.get({ publicKey: options, mediation });
      if (pressed) window.__passkeyTiming.push(performance.now() - pressed);
      const verdict = await post("/webauthn/authenticate/complete", {
        rawId: b64(used.rawId), clientDataJSON: b64(used.response.clientDataJSON), authenticatorData: b64(used.response.authenticatorData),
        signature: b64(used.response.signature), userHandle: used.response.userHandle ? b64(used.response.userHandle) : null });
      show(verdict.ok ? "signed in " + JSON.stringify(verdict) : "refused " + verdict.error);
    } catch (error) { show("error " + error.name + ": " + error.message); }
  }
  if (location.search.includes("conditional")) signIn({ discoverable: true }, "conditional");
</script></body></html>"""

# A sign-in page that upgrades to a passkey right after a password sign-in (WebAuthn's
# conditional create, as sites deploy automatic passkey upgrades), and sends the Signal API.
UPGRADE = """<!doctype html><html><head><meta charset="utf-8"><title>Upgrade</title>
<style>body{font:15px sans-serif;margin:40px} button{display:block;margin:8px 0;padding:6px 12px} input{padding:6px;width:240px}</style></head>
<body><h1>Example sign-in</h1>
<form id="login" onsubmit="event.preventDefault(); upgrade();"><label>User <input id="username" autocomplete="username"></label>
<label>Password <input id="password" type="password" autocomplete="current-password"></label><button id="signin-password">Sign in</button></form>
<button id="signin" onclick="signIn()">Sign in with a passkey</button>
<pre id="result"></pre><pre id="signal"></pre>
<script>
  const b64 = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  const unb64 = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const show = (text) => { document.getElementById("result").textContent = text; };
  async function post(path, body) {
    const response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    return response.json();
  }
  // After the password sign-in: ask for a passkey without a dialog, as a site does.
  async function upgrade() {
    show("");
    try {
      const options = await post("/webauthn/register/begin", { alg: -7, conditional: true });
      options.challenge = unb64(options.challenge);
      options.user.id = unb64(options.user.id);
      options.excludeCredentials = options.excludeCredentials.map((c) => ({ ...c, id: unb64(c.id) }));
      const made = await navigator.credentials.create({ publicKey: options, mediation: "conditional" });
      const verdict = await post("/webauthn/register/complete", {
        clientDataJSON: b64(made.response.clientDataJSON), attestationObject: b64(made.response.attestationObject),
        publicKeyAlgorithm: made.response.getPublicKeyAlgorithm(), instance: made instanceof PublicKeyCredential, credentialId: made.id });
      show(verdict.ok ? "upgraded " + JSON.stringify(verdict) : "refused " + verdict.error);
    } catch (error) { show("error " + error.name + ": " + error.message); }
  }
  async function signIn() {
    show("");
    try {
      const options = await post("/webauthn/authenticate/begin", { discoverable: true });
      options.challenge = unb64(options.challenge);
      const used = await navigator.credentials.get({ publicKey: options });
      const verdict = await post("/webauthn/authenticate/complete", {
        rawId: b64(used.rawId), clientDataJSON: b64(used.response.clientDataJSON), authenticatorData: b64(used.response.authenticatorData),
        signature: b64(used.response.signature), userHandle: used.response.userHandle ? b64(used.response.userHandle) : null });
      show(verdict.ok ? "signed in " + JSON.stringify(verdict) : "refused " + verdict.error);
    } catch (error) { show("error " + error.name + ": " + error.message); }
  }
  // The Signal API with the server's view of the account; `what` says which, `extra` overrides.
  async function sendSignal(what, extra) {
    const account = await post("/webauthn/account", {});
    const base = { rpId: location.hostname, userId: account.userId };
    try {
      if (what === "unknown") await PublicKeyCredential.signalUnknownCredential({ rpId: base.rpId, credentialId: account.credentials[account.credentials.length - 1], ...extra });
      if (what === "accepted") await PublicKeyCredential.signalAllAcceptedCredentials({ ...base, allAcceptedCredentialIds: account.credentials, ...extra });
      if (what === "details") await PublicKeyCredential.signalCurrentUserDetails({ ...base, name: "alice.new@example.com", displayName: "Alice New", ...extra });
      return "resolved";
    } catch (error) { return "error " + error.name; }
  }
  // Framed (UPGRADE_FRAMING): upgrade when the top page says so, and tell it what came of it.
  if (location.search.includes("framed")) addEventListener("message", async (event) => {
    if (event.data !== "go") return;
    await upgrade();
    parent.postMessage("frame " + document.getElementById("result").textContent, "*");
  });
</script></body></html>"""

# The same sign-in page with a frame of its own origin that asks for the upgrade after the top
# page's fill: a frame never gets one.
UPGRADE_FRAMING = UPGRADE.replace("</body>", """<iframe id="child" src="/upgrade.html?framed" style="width:500px;height:160px"></iframe>
<script>window.__frame = ""; addEventListener("message", (event) => { if (String(event.data).startsWith("frame ")) window.__frame = String(event.data); });</script></body>""")

# A frame of another site asking for a passkey, and the page that embeds it without delegating.
FRAMED = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<script>window.__frame = ""; addEventListener("message", (event) => { window.__frame = String(event.data); });</script>
<iframe id="child" src="https://other.example.net/passkey-frame.html" style="width:500px;height:200px"></iframe></body></html>"""
FRAME = """<!doctype html><html><head><meta charset="utf-8"></head><body><pre id="result"></pre><script>
  navigator.credentials.get({ publicKey: { challenge: new Uint8Array(32), rpId: "other.example.net" } })
    .then(() => { document.getElementById("result").textContent = "signed"; },
          (error) => { document.getElementById("result").textContent = "error " + error.name; parent.postMessage("frame " + error.name, "*"); });
</script></body></html>"""


def b64(data):
    return base64.urlsafe_b64encode(bytes(data)).rstrip(b"=").decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jsonable(value):
    if isinstance(value, bytes):
        return b64(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "value") and not isinstance(value, (int, str)):
        return value.value
    return value


class RelyingParty:
    """One relying party (`rp_id`), one account, its passkeys as the server stores them."""

    def __init__(self, rp_id):
        self.rp_id = rp_id
        self.credentials = []
        self.state = None
        self.lock = threading.Lock()
        self.user = {"id": b"user-handle-alice", "name": "alice@example.com", "displayName": "Alice"}

    def server(self, algorithm=None):
        server = Fido2Server(PublicKeyCredentialRpEntity(self.rp_id, "Example passkeys"))
        if algorithm is not None:
            server.allowed_algorithms = [PublicKeyCredentialParameters(PublicKeyCredentialType.PUBLIC_KEY, algorithm)]
        return server

    def handle(self, path, body):
        with self.lock:
            try:
                return getattr(self, path.strip("/").replace("webauthn/", "").replace("/", "_"))(body)
            except Exception as error:  # noqa: BLE001 - a refusal is the answer, not a crash
                return {"ok": False, "error": f"{type(error).__name__}: {error}"}

    def register_begin(self, wish):
        self.algorithm = wish.get("alg", -7)
        self.conditional = bool(wish.get("conditional"))
        options, self.state = self.server(self.algorithm).register_begin(
            self.user, self.credentials if wish.get("exclude") else [], user_verification="preferred")
        public_key = jsonable(dict(options["publicKey"]))
        if wish.get("rpId"):
            public_key["rp"]["id"] = wish["rpId"]
        return public_key

    def register_complete(self, body):
        attestation = AttestationObject(unb64(body["attestationObject"]))
        if self.conditional:
            # WebAuthn L3 §7.1 step 14: a conditional registration's UP flag is not checked (it is
            # made without a gesture); this fido2 checks it always, so the check runs on a copy
            # with UP set — with `none` attestation nothing signs the flags, and every other check
            # (client data, origin, rpId hash, credential, algorithm) is fido2's own.
            flags = attestation.auth_data.flags
            if flags & AuthenticatorData.FLAG.USER_PRESENT:
                raise ValueError("a conditional registration with user presence")
            data = attestation.auth_data
            patched = AuthenticatorData(bytes(data[:32]) + bytes([flags | AuthenticatorData.FLAG.USER_PRESENT]) + bytes(data[33:]))
            attestation = AttestationObject.create(attestation.fmt, patched, attestation.att_statement)
        data = self.server(self.algorithm).register_complete(self.state, ClientData(unb64(body["clientDataJSON"])), attestation)
        if self.conditional:
            data = type("Registered", (), {"credential_data": data.credential_data, "counter": data.counter, "flags": flags})()
        self.credentials.append(data.credential_data)
        return {"ok": True, "alg": data.credential_data.public_key[3], "counter": data.counter, "flags": data.flags,
                "aaguid": data.credential_data.aaguid.hex(), "publicKeyAlgorithm": body.get("publicKeyAlgorithm"),
                "instance": body.get("instance")}

    def account(self, _body):
        """The server's view of the account, for the page's Signal API calls."""
        return {"userId": b64(self.user["id"]), "credentials": [b64(c.credential_id) for c in self.credentials]}

    def authenticate_begin(self, wish):
        credentials = [] if wish.get("discoverable") else self.credentials[-1:] if wish.get("only") == "last" else self.credentials
        options, self.state = self.server().authenticate_begin(credentials, user_verification=wish.get("uv", "preferred"))
        return jsonable(dict(options["publicKey"]))

    def authenticate_complete(self, body):
        data = AuthenticatorData(unb64(body["authenticatorData"]))
        used = self.server().authenticate_complete(
            self.state, self.credentials, unb64(body["rawId"]), ClientData(unb64(body["clientDataJSON"])), data, unb64(body["signature"]))
        return {"ok": True, "alg": used.public_key[3], "counter": data.counter, "flags": data.flags,
                "userHandle": body.get("userHandle"), "expectedUserHandle": b64(self.user["id"])}
