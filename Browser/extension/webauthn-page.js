// Runs in the page's own world at document_start (SPEC.md §13.5.1): wraps
// navigator.credentials.create/get so a page's passkey requests reach Coffer. It holds nothing
// secret and decides nothing: it turns the page's options into plain data, hands them to the
// extension's isolated content script (passkeys.js) as a DOM event, and turns the answer back
// into a PublicKeyCredential. Whatever a page forges here only opens Coffer's sheet; a passkey
// is made or used only after a person's click in it, for the origin the browser reports.
"use strict";

(() => {
  const credentials = globalThis.navigator?.credentials;
  if (!credentials || !globalThis.PublicKeyCredential || globalThis.__cofferWebAuthn) return;
  Object.defineProperty(globalThis, "__cofferWebAuthn", { value: true });
  const REQUEST = "coffer-webauthn-request", ANSWER = "coffer-webauthn-answer";
  const native = { create: credentials.create.bind(credentials), get: credentials.get.bind(credentials) };
  const SUPPORTED = [-7, -8];
  let nextId = 1;

  const toBytes = (source, name) => {
    if (source instanceof ArrayBuffer) return new Uint8Array(source);
    if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    throw new TypeError(`${name} is not a BufferSource`);
  };
  const encode = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const decode = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)).buffer;
  const ids = (list, name) => (list ?? []).map((entry, index) => encode(toBytes(entry?.id, `${name}[${index}].id`)));

  /** One request to passkeys.js; settles on its answer, the signal's abort or the timeout. */
  function relay(request, signal, timeout) {
    return new Promise((resolve, reject) => {
      const id = `${Date.now()}-${nextId++}`;
      const finish = (settle) => {
        removeEventListener(ANSWER, listener);
        clearTimeout(timer);
        signal?.removeEventListener("abort", aborted);
        settle();
      };
      const listener = (event) => {
        let answer;
        try { answer = JSON.parse(event.detail); } catch { return; }
        if (answer?.id !== id) return;
        finish(() => resolve(answer));
      };
      const aborted = () => {
        dispatchEvent(new CustomEvent(REQUEST, { detail: JSON.stringify({ id, kind: "abort" }) }));
        finish(() => reject(signal.reason ?? new DOMException("The operation was aborted.", "AbortError")));
      };
      const timer = setTimeout(() => {
        dispatchEvent(new CustomEvent(REQUEST, { detail: JSON.stringify({ id, kind: "abort" }) }));
        finish(() => reject(new DOMException("The operation either timed out or was not allowed.", "NotAllowedError")));
      }, Math.min(Math.max(Number(timeout) || 300000, 30000), 600000));
      signal?.addEventListener("abort", aborted);
      addEventListener(ANSWER, listener);
      dispatchEvent(new CustomEvent(REQUEST, { detail: JSON.stringify({ ...request, id }) }));
    });
  }

  const ERRORS = {
    cancelled: "NotAllowedError", locked: "NotAllowedError", notFound: "NotAllowedError", wrongPassword: "NotAllowedError",
    excluded: "InvalidStateError", relyingParty: "SecurityError", forbidden: "NotAllowedError",
  };
  const failure = (answer) => new DOMException(answer.error?.message ?? "The operation either timed out or was not allowed.",
    ERRORS[answer.error?.code] ?? "NotAllowedError");

  /** A real PublicKeyCredential's shape and prototype, with the answer as own values. */
  function credential(answer, response, responsePrototype) {
    Object.setPrototypeOf(response, responsePrototype);
    const rawId = decode(answer.credentialId);
    const made = { id: answer.credentialId, rawId, type: "public-key", authenticatorAttachment: "platform", response };
    const object = Object.create(PublicKeyCredential.prototype);
    for (const [name, value] of Object.entries(made)) Object.defineProperty(object, name, { value, enumerable: true });
    Object.defineProperty(object, "getClientExtensionResults", { value: () => ({}) });
    Object.defineProperty(object, "toJSON", {
      value: () => ({
        id: made.id, rawId: made.id, type: made.type, authenticatorAttachment: made.authenticatorAttachment, clientExtensionResults: {},
        response: Object.fromEntries(Object.entries(answer.json)),
      }),
    });
    return object;
  }

  const notAllowed = () => new DOMException("The operation either timed out or was not allowed.", "NotAllowedError");

  async function create(options) {
    const publicKey = options?.publicKey;
    if (!publicKey) return native.create(options);
    // An automatic passkey upgrade (WebAuthn L3 `mediation: "conditional"`): Coffer's, silent,
    // or refused as browsers refuse one — never the browser's own flow, never a sheet.
    const conditional = options.mediation === "conditional";
    if (options.signal?.aborted) throw options.signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
    const challenge = toBytes(publicKey.challenge, "challenge");
    const userId = toBytes(publicKey.user?.id, "user.id");
    if (userId.length < 1 || userId.length > 64) throw new TypeError("user.id must be 1 to 64 bytes");
    if (publicKey.rp?.id === "") throw new DOMException("The relying party id is empty.", "SecurityError");
    const algorithms = (publicKey.pubKeyCredParams ?? []).filter((p) => p?.type === "public-key").map((p) => Number(p.alg));
    // No algorithm Coffer has (or options it does not take on): the browser's own flow.
    if (!algorithms.some((alg) => SUPPORTED.includes(alg)) || publicKey.authenticatorSelection?.authenticatorAttachment === "cross-platform") {
      if (conditional) throw notAllowed();
      return native.create(options);
    }
    const answer = await relay({
      kind: "create", conditional, challenge: encode(challenge), rpId: publicKey.rp?.id ?? null, rpName: String(publicKey.rp?.name ?? ""),
      user: { id: encode(userId), name: String(publicKey.user?.name ?? ""), displayName: String(publicKey.user?.displayName ?? "") },
      algorithms, excludeCredentials: ids(publicKey.excludeCredentials, "excludeCredentials"),
      userVerification: publicKey.authenticatorSelection?.userVerification ?? "preferred",
    }, options.signal, publicKey.timeout);
    if (answer.fallback && !conditional) return native.create(options);
    if (!answer.ok) throw conditional && answer.error?.code !== "relyingParty" ? notAllowed() : failure(answer);
    const response = {
      clientDataJSON: decode(answer.clientDataJSON), attestationObject: decode(answer.attestationObject),
      getTransports: () => ["internal", "hybrid"], getAuthenticatorData: () => decode(answer.authenticatorData),
      getPublicKey: () => decode(answer.publicKey), getPublicKeyAlgorithm: () => answer.publicKeyAlgorithm,
    };
    answer.json = {
      clientDataJSON: answer.clientDataJSON, attestationObject: answer.attestationObject, authenticatorData: answer.authenticatorData,
      publicKey: answer.publicKey, publicKeyAlgorithm: answer.publicKeyAlgorithm, transports: ["internal", "hybrid"],
    };
    return credential(answer, response, AuthenticatorAttestationResponse.prototype);
  }

  async function get(options) {
    const publicKey = options?.publicKey;
    if (!publicKey) return native.get(options);
    if (options.signal?.aborted) throw options.signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
    const challenge = toBytes(publicKey.challenge, "challenge");
    if (publicKey.rpId === "") throw new DOMException("The relying party id is empty.", "SecurityError");
    const answer = await relay({
      kind: "get", challenge: encode(challenge), rpId: publicKey.rpId ?? null, allowCredentials: ids(publicKey.allowCredentials, "allowCredentials"),
      userVerification: publicKey.userVerification ?? "preferred", conditional: options.mediation === "conditional",
    }, options.signal, publicKey.timeout);
    if (answer.fallback) return native.get(options);
    if (!answer.ok) throw failure(answer);
    const response = {
      clientDataJSON: decode(answer.clientDataJSON), authenticatorData: decode(answer.authenticatorData),
      signature: decode(answer.signature), userHandle: answer.userHandle ? decode(answer.userHandle) : null,
    };
    answer.json = {
      clientDataJSON: answer.clientDataJSON, authenticatorData: answer.authenticatorData, signature: answer.signature,
      userHandle: answer.userHandle ?? null,
    };
    return credential(answer, response, AuthenticatorAssertionResponse.prototype);
  }

  // ---- The Signal API (WebAuthn L3 §5.1.10–12): the site tells Coffer what it knows. ----
  // The page learns nothing back: a signal resolves once Coffer took it (or dropped it: locked,
  // over the rate limit), and rejects only for the page's own errors — a credential id or user
  // id that is no base64url (TypeError), an rpId that is not this page's (SecurityError).
  const B64URL = /^[A-Za-z0-9_-]+$/;
  const nativeSignals = {};
  for (const name of ["signalUnknownCredential", "signalAllAcceptedCredentials", "signalCurrentUserDetails"]) {
    nativeSignals[name] = typeof PublicKeyCredential[name] === "function" ? PublicKeyCredential[name].bind(PublicKeyCredential) : null;
  }

  async function signal(name, options, members) {
    if (typeof options?.rpId !== "string" || options.rpId === "") throw new TypeError("rpId is required");
    for (const [key, value] of Object.entries(members)) {
      const values = Array.isArray(value) ? value : [value];
      if (key !== "name" && key !== "displayName" && !values.every((v) => typeof v === "string" && B64URL.test(v))) {
        throw new TypeError(`${key} is not base64url`);
      }
    }
    const answer = await relay({ kind: "signal", signal: name, rpId: options.rpId, ...members }, null, 30000);
    if (!answer.ok && answer.error?.code === "relyingParty") throw new DOMException(answer.error.message, "SecurityError");
    // The browser's own password manager hears it too, as it would without Coffer.
    nativeSignals["signal" + name[0].toUpperCase() + name.slice(1)]?.(options).catch(() => {});
  }

  // Look native: `navigator.credentials.create.toString()` and the functions' names stay theirs.
  const install = (target, name, value) => {
    Object.defineProperty(value, "name", { value: name });
    Object.defineProperty(value, "toString", { value: () => `function ${name}() { [native code] }` });
    Object.defineProperty(target, name, { value, configurable: true, writable: true });
  };
  install(credentials, "create", function create_(options) { return create(options); });
  install(credentials, "get", function get_(options) { return get(options); });
  install(PublicKeyCredential, "isUserVerifyingPlatformAuthenticatorAvailable", async function available() { return true; });
  install(PublicKeyCredential, "isConditionalMediationAvailable", async function conditional() { return true; });
  install(PublicKeyCredential, "getClientCapabilities", async function capabilities() {
    return { conditionalGet: true, conditionalCreate: true, passkeyPlatformAuthenticator: true, userVerifyingPlatformAuthenticator: true,
             hybridTransport: false, relatedOrigins: false, signalAllAcceptedCredentials: true, signalCurrentUserDetails: true,
             signalUnknownCredential: true };
  });
  install(PublicKeyCredential, "signalUnknownCredential", async function signalUnknownCredential(options) {
    return signal("unknownCredential", options, { credentialId: options?.credentialId });
  });
  install(PublicKeyCredential, "signalAllAcceptedCredentials", async function signalAllAcceptedCredentials(options) {
    if (!Array.isArray(options?.allAcceptedCredentialIds)) throw new TypeError("allAcceptedCredentialIds is required");
    return signal("allAcceptedCredentials", options, { userId: options.userId, allAcceptedCredentialIds: options.allAcceptedCredentialIds });
  });
  install(PublicKeyCredential, "signalCurrentUserDetails", async function signalCurrentUserDetails(options) {
    if (typeof options?.name !== "string" || typeof options?.displayName !== "string") throw new TypeError("name and displayName are required");
    return signal("currentUserDetails", options, { userId: options.userId, name: options.name, displayName: options.displayName });
  });
})();
