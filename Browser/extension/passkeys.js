// Coffer as the page's passkey authenticator, in the extension's isolated world (SPEC.md §13.5.1).
// webauthn-page.js (the page's world) sends each navigator.credentials request here as a DOM
// event; this script asks the service worker, which takes the origin from the browser and builds
// clientDataJSON itself, and shows the sheet — a closed shadow root in the top layer — where a
// person saves a passkey or picks one. Nothing is made or signed without a trusted click on the
// sheet (or on the inline list, for conditional mediation) that was on screen long enough to be
// seen. A request with no Coffer passkey for the site goes to the browser's own flow.
"use strict";

(() => {
  const api = globalThis.browser ?? globalThis.chrome;
  if (globalThis.__cofferPasskeys) return;
  const REQUEST = "coffer-webauthn-request", ANSWER = "coffer-webauthn-answer";
  const SETTLE_MS = 400;
  const send = (message) => api.runtime.sendMessage(message).catch((error) => ({ ok: false, error: { code: "failed", message: String(error) } }));
  const reply = (id, answer) => dispatchEvent(new CustomEvent(ANSWER, { detail: JSON.stringify({ ...answer, id }) }));
  /** Whether this frame may ask: the top frame, a same-origin frame, or one the top page
   * delegated the feature to with `allow="publickey-credentials-get/create"` (Chromium tells). */
  const delegated = (feature) => {
    try { return window === window.top || document.featurePolicy?.allowsFeature?.(feature) === true; } catch { return false; }
  };

  let sheet = null;  // { host, root, id, shownAt }
  /** The pending conditional request (`mediation: "conditional"`): its passkeys go in the inline list. */
  let conditional = null;  // { id, request, passkeys }

  function closeSheet() {
    if (!sheet) return;
    try { sheet.host.hidePopover?.(); } catch { /* hidden */ }
    sheet.host.remove();
    sheet = null;
  }

  /** Whether a trusted click on a panel (`{host, shownAt}`: the sheet, the upgrade notice)
   * counts: shown long enough, nothing else in the top layer, its look intact. */
  function seen(event, shown) {
    if (!event.isTrusted || !shown || performance.now() - shown.shownAt < SETTLE_MS) return false;
    if (!shown.host.matches(":popover-open")) return false;
    if ([...document.querySelectorAll(":popover-open, dialog:modal")].some((other) => other !== shown.host)) return false;
    const style = getComputedStyle(shown.host);
    return Number(style.opacity) === 1 && style.visibility === "visible" && style.transform === "none" && style.filter === "none";
  }

  /** The sheet: a title, a line, and buttons [{label, primary, action}]. */
  function showSheet(id, title, detail, buttons) {
    closeSheet();
    closeNotice();  // one panel at a time: a click counts only with nothing else in the top layer
    const closing = buttons.map((button) => ({ ...button, action: () => { closeSheet(); button.action(); } }));
    const shown = panel("coffer-passkey-sheet", title, detail, closing);
    if (!shown) { reply(id, { fallback: true }); return; }
    sheet = { ...shown, id };
  }

  /** A panel in the top layer (a closed shadow root): a title, a line, buttons [{label,
   * primary, action}], each acting only on a click `seen` accepts. `null` when the top layer
   * refused it. */
  function panel(tag, title, detail, buttons) {
    const host = document.createElement(tag);
    host.setAttribute("popover", "manual");
    const root = host.attachShadow({ mode: "closed" });
    root.innerHTML = `<style>
      :host { all: initial !important; position: fixed !important; inset: 16px 16px auto auto !important; margin: 0 !important;
              display: block !important; opacity: 1 !important; visibility: visible !important; transform: none !important;
              filter: none !important; z-index: 2147483647 !important; border: 0 !important; padding: 0 !important; background: transparent !important; }
      .sheet { font: 14px system-ui, sans-serif; background: #fff; color: #111; border: 1px solid #bbb; border-radius: 10px;
               box-shadow: 0 6px 24px rgba(0,0,0,.25); padding: 16px; width: 340px; }
      h1 { font-size: 15px; margin: 0 0 6px; } p { margin: 0 0 12px; color: #444; }
      button { display: block; width: 100%; font: inherit; text-align: left; margin: 6px 0 0; padding: 8px 10px; border-radius: 6px;
               border: 1px solid #ccc; background: #f7f7f7; cursor: pointer; }
      button.primary { background: #1a73e8; color: #fff; border-color: #1a73e8; }
    </style><div class="sheet" role="dialog" aria-label="Coffer passkey"><h1></h1><p></p><div class="buttons"></div></div>`;
    root.querySelector("h1").textContent = title;
    root.querySelector("p").textContent = detail;
    const box = root.querySelector(".buttons");
    for (const button of buttons) {
      const element = document.createElement("button");
      element.textContent = button.label;
      element.className = button.primary ? "option primary" : "option";
      element.addEventListener("click", (event) => {
        event.stopPropagation();
        if (!seen(event, made)) return;  // a synthetic, early or covered click chooses nothing
        button.action();
      });
      box.append(element);
    }
    document.documentElement.append(host);
    try { host.showPopover(); } catch { host.remove(); return null; }
    const made = { host, root, shownAt: performance.now() };
    return made;
  }

  const cancelled = { ok: false, error: { code: "cancelled", message: "The operation either timed out or was not allowed." } };

  async function sign(id, request, recordIdentifier) {
    reply(id, await send({ type: "passkeyGet", challenge: request.challenge, rpId: request.rpId, userVerification: request.userVerification,
                           allowCredentials: request.allowCredentials, recordIdentifier, delegated: delegated("publickey-credentials-get") }));
  }

  async function get(id, request, unlock = false) {
    const listed = await send({ type: "passkeyList", rpId: request.rpId, allowCredentials: request.allowCredentials, unlock,
                                delegated: delegated("publickey-credentials-get") });
    if (!listed.ok) { reply(id, listed); return; }
    const passkeys = listed.passkeys ?? [];
    if (passkeys.length === 0 && !listed.suggestionsOff) { reply(id, { fallback: true }); return; }
    const rp = passkeys[0]?.rpId ?? request.rpId ?? location.hostname;
    if (request.conditional) {
      conditional = { id, request, passkeys };
      return;
    }
    const buttons = passkeys.map((passkey) => ({ label: passkey.userName || "(no user name)", primary: passkeys.length === 1,
                                                 action: () => sign(id, request, passkey.recordIdentifier) }));
    if (listed.suggestionsOff) buttons.push({ label: "Unlock Coffer to see passkeys", primary: true, action: () => get(id, request, true) });
    buttons.push({ label: "Use another device or security key", action: () => reply(id, { fallback: true }) });
    buttons.push({ label: "Cancel", action: () => reply(id, cancelled) });
    showSheet(id, `Sign in to ${rp} with a passkey`, listed.locked ? "Coffer is locked: it asks for your master password after you choose."
      : "Choose the account to sign in with.", buttons);
  }

  async function create(id, request) {
    // The relying party is checked before anything is shown: a page naming another site's id
    // gets its SecurityError at once.
    const checked = await send({ type: "passkeyList", rpId: request.rpId, allowCredentials: [], delegated: delegated("publickey-credentials-create") });
    if (!checked.ok) { reply(id, checked); return; }
    const rp = request.rpId ?? location.hostname;
    const who = request.user.name || request.user.displayName || "this account";
    showSheet(id, `Save a passkey for ${rp} in Coffer?`, `For ${who}. Coffer signs you in with it on this and your other devices.`, [
      { label: "Save passkey", primary: true, action: async () => {
        reply(id, await send({ type: "passkeyCreate", challenge: request.challenge, rpId: request.rpId, user: request.user,
                               algorithms: request.algorithms, excludeCredentials: request.excludeCredentials,
                               userVerification: request.userVerification, delegated: delegated("publickey-credentials-create") }));
      } },
      { label: "Use another device or security key", action: () => reply(id, { fallback: true }) },
      { label: "Cancel", action: () => reply(id, cancelled) },
    ]);
  }

  // ---- Automatic passkey upgrades (SPEC.md §13.5.2) ----

  let notice = null;  // { host, root, shownAt, timer }

  function closeNotice() {
    if (!notice) return;
    clearTimeout(notice.timer);
    try { notice.host.hidePopover?.(); } catch { /* hidden */ }
    notice.host.remove();
    notice = null;
  }

  /** "Coffer added a passkey for example.com", with Undo: a person always hears of a passkey
   * made without a sheet, and can take it back. */
  function showNotice(rp, recordIdentifier, credentialId) {
    closeNotice();
    const made = panel("coffer-passkey-notice", `Coffer added a passkey for ${rp}`,
      "You can sign in with it next time. Undo removes it.", [
        { label: "Undo", action: async () => {
          const answer = await send({ type: "passkeyUndo", recordIdentifier, credentialId });
          closeNotice();
          if (answer.ok) showRemoved(rp);
        } },
        { label: "OK", primary: true, action: closeNotice },
      ]);
    if (!made) return;
    notice = { ...made, timer: setTimeout(closeNotice, 20000) };
  }
  function showRemoved(rp) {
    const made = panel("coffer-passkey-notice", `Passkey for ${rp} removed`, "Your password still signs you in.",
      [{ label: "OK", primary: true, action: closeNotice }]);
    if (made) notice = { ...made, timer: setTimeout(closeNotice, 8000) };
  }

  async function upgrade(id, request) {
    const rp = request.rpId ?? location.hostname;
    const answer = await send({ type: "passkeyCreate", conditional: true, challenge: request.challenge, rpId: request.rpId, user: request.user,
                                algorithms: request.algorithms, excludeCredentials: request.excludeCredentials,
                                userVerification: request.userVerification });
    reply(id, answer);
    if (answer.ok) showNotice(rp, answer.recordIdentifier, answer.credentialId);
  }

  // ---- The Signal API: passed on; the page hears only whether its rpId was its own. ----

  async function signal(id, request) {
    const message = { type: "passkeySignal", signal: request.signal, rpId: request.rpId };
    for (const key of ["credentialId", "userId", "allAcceptedCredentialIds", "name", "displayName"]) {
      if (request[key] !== undefined) message[key] = request[key];
    }
    const answer = await send(message);
    reply(id, answer.ok || answer.error?.code !== "relyingParty" ? { ok: true } : answer);
  }

  addEventListener(REQUEST, (event) => {
    let request;
    try { request = JSON.parse(event.detail); } catch { return; }
    if (typeof request?.id !== "string") return;
    if (request.kind === "abort") {
      if (sheet?.id === request.id) closeSheet();
      if (conditional?.id === request.id) conditional = null;
      return;
    }
    if (request.kind === "signal") {
      if (typeof request.signal === "string") signal(request.id, request);
      return;
    }
    if (typeof request.challenge !== "string" || request.challenge.length > 5462) { reply(request.id, { ok: false, error: { code: "forbidden", message: "bad challenge" } }); return; }
    if (request.kind === "create" && request.conditional === true && request.user && typeof request.user.id === "string") upgrade(request.id, request);
    else if (request.kind === "create" && request.user && typeof request.user.id === "string") create(request.id, request);
    else if (request.kind === "get") get(request.id, request);
  });

  // For content.js's inline list (conditional mediation under a `username webauthn` field).
  Object.defineProperty(globalThis, "__cofferPasskeys", {
    value: {
      conditionalPasskeys: () => conditional?.passkeys ?? [],
      chooseConditional(recordIdentifier) {
        const pending = conditional;
        conditional = null;
        if (pending) sign(pending.id, pending.request, recordIdentifier);
      },
    },
  });
})();
