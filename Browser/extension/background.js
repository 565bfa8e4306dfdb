// Coffer's service worker: the only part of the extension that talks to the native host
// (SPEC.md §13). Content scripts and the popup send it requests; it adds the origin the
// browser reports for the sending frame (sender.origin), never one a page or script supplied,
// and forwards what each context may ask.
"use strict";

const api = globalThis.browser ?? globalThis.chrome;
// Chromium's worker; Firefox lists them before this script.
if (typeof importScripts === "function") importScripts("clipboard.js", "vault-first-page.js");
const HOST = "org.coffer.browser_host";
const PENDING_SAVE_MS = 2 * 60 * 1000;

// ---- The host connection: one long-lived port, requests matched to answers by id. ----

let port = null;
let nextId = 1;
const waiting = new Map();

function connect() {
  port = api.runtime.connectNative(HOST);
  port.onMessage.addListener((answer) => {
    const entry = waiting.get(answer.id);
    if (!entry) return;
    waiting.delete(answer.id);
    entry.resolve(answer);
  });
  port.onDisconnect.addListener(() => {
    const reason = api.runtime.lastError?.message ?? "the Coffer host closed the connection";
    for (const entry of waiting.values()) entry.resolve({ ok: false, error: { code: "hostUnavailable", message: reason } });
    waiting.clear();
    port = null;
  });
}

function ask(request) {
  if (!port) connect();
  const id = nextId++;
  return new Promise((resolve) => {
    waiting.set(id, { resolve });
    port.postMessage({ ...request, id });
  });
}

// The host runs while the browser does, as KeePassXC-Browser keeps its proxy: an open native port
// keeps this worker (Chromium) or event page (Firefox) from being suspended, and the host spends
// its idle time keeping the vault page's table current (SPEC.md §13.7). So opening the vault page
// neither wakes this script nor starts a process. Should the host exit, the next request starts it.
connect();

// ---- Where a message comes from. ----

/** The origin of the frame that sent a message, as the browser reports it; null for anything
 * that is not an http(s) page (about:blank, data:, a sandboxed frame's opaque origin). */
function senderOrigin(sender) {
  let origin = sender.origin;
  if (!origin && sender.url) {
    try { origin = new URL(sender.url).origin; } catch { origin = null; }
  }
  return origin && /^https?:\/\/[^/]+$/.test(origin) ? origin : null;
}

/** Whether a card or an address may go to (or come from) `origin`: https, or http://localhost. */
function isSecureOrigin(origin) {
  return /^https:|^http:\/\/localhost(:|$)/.test(origin);
}

/** The chooser of text insertion (insert.html), opened by the context menu in a window of its
 * own (so it has a tab); a content script's sender URL is its page's, never the extension's. */
function isInsertChooser(sender) {
  return sender.id === api.runtime.id && typeof sender.url === "string" && sender.url.startsWith(api.runtime.getURL("insert.html"));
}

/** The vault page (vault.html), in a tab, the side panel or the sidebar: an extension page, so
 * its sender URL is the extension's — a content script's is always its web page's. */
function isVaultPage(sender) {
  return sender.id === api.runtime.id && typeof sender.url === "string" && sender.url.startsWith(api.runtime.getURL("vault.html"));
}

function isPopup(sender) {
  return sender.id === api.runtime.id && !sender.tab && typeof sender.url === "string"
    && sender.url.startsWith(api.runtime.getURL("popup.html"));
}

// ---- Settings and the pending save. ----

async function settings() {
  const stored = await api.storage.local.get({ fillOnLoad: false, neverSave: [] });
  return stored;
}

/** A submitted login waiting for the person's Save / Update / Never, per tab; in memory only. */
const pendingSaves = new Map();
/** A submitted card waiting for the person's Save / Not now, per tab; in memory only. */
const pendingCardSaves = new Map();

/** What the card's save bar shows: the network and the last digits, never the number. */
function cardBar(card) {
  const brand = card.number.startsWith("4") ? "Visa" : /^(5[1-5]|2[2-7])/.test(card.number) ? "Mastercard" : /^3[47]/.test(card.number) ? "American Express" : "";
  return { brand, lastDigits: card.number.slice(-4), hasCode: Boolean(card.securityCode) };
}

function pendingSave(tabId, origin) {
  const pending = pendingSaves.get(tabId);
  if (!pending || pending.origin !== origin || Date.now() - pending.at > PENDING_SAVE_MS) return null;
  return pending;
}

// ---- Requests of content scripts (one per frame). ----

async function fromContentScript(message, sender) {
  const origin = senderOrigin(sender);
  if (!origin || !sender.tab) return { ok: false, error: { code: "forbidden", message: "not a web page" } };
  const tabId = sender.tab.id;
  switch (message.type) {
    case "suggest":
      return ask({ type: "suggest", origin });
    case "items":
      return ask({ type: "items", kind: message.kind === "card" ? "card" : "identity" });
    case "fillItem":
      // A card or an address goes only into the https page (or localhost) of the frame whose
      // field the person chose: the origin is the browser's, and the host checks it again.
      if (!isSecureOrigin(origin)) return { ok: false, error: { code: "forbidden", message: "only https pages" } };
    {
      const kind = message.kind === "card" ? "card" : "identity";
      const answer = await ask({ type: "fillItem", origin, kind, recordIdentifier: String(message.recordIdentifier ?? "") });
      // A processor's card fields may be frames of their own (number, expiry and code each in
      // one, as Stripe embeds them): the other frames of the chosen frame's origin in this tab
      // are filled too, and no frame of any other origin — the page around them learns nothing.
      if (answer.ok && kind === "card") fillSameOriginFrames(tabId, sender.frameId, origin, answer).catch(() => {});
      return answer;
    }
    case "fill": {
      let answer;
      if (message.trigger === "choice") {
        answer = await ask({ type: "fill", origin, trigger: "choice", recordIdentifier: String(message.recordIdentifier ?? "") });
      } else if (message.trigger === "command") {
        answer = await ask({ type: "fill", origin, trigger: "command" });
      } else if (message.trigger === "pageLoad") {
        if (!(await settings()).fillOnLoad) return { ok: false, error: { code: "forbidden", message: "fill on page load is off" } };
        answer = await ask({ type: "fill", origin, trigger: "pageLoad", topFrame: sender.frameId === 0 });
      } else {
        return { ok: false, error: { code: "badRequest", message: "unknown trigger" } };
      }
      // Remembered beside the answer, not before it: the fill waits for nothing.
      if (answer.ok && sender.frameId === 0) rememberFill(tabId, origin, answer).catch(() => {});
      return answer;
    }
    case "generate": {
      // The field's passwordrules, then the rule published for the page's host (SPEC §12.1):
      // the host chooses; the origin is the browser's, never the page's word.
      const request = { type: "generate", length: 20, origin };
      if (typeof message.rules === "string" && message.rules.trim()) request.rules = message.rules.slice(0, 1024);
      return ask(request);
    }
    case "submitted": {
      const user = String(message.user ?? ""), password = String(message.password ?? "");
      if (!password) return { ok: true, state: "none" };
      if ((await settings()).neverSave.includes(origin)) return { ok: true, state: "never" };
      // A frame of another site says whose page it is in: a payment processor's frame asking
      // for a bank login is no login of its own (the host decides, from the web's data).
      const request = { type: "saveState", origin, user, password };
      if (sender.frameId !== 0) {
        try { request.topOrigin = new URL(sender.tab.url).origin; } catch { /* no top page to name */ }
        if (!/^https?:/.test(request.topOrigin ?? "")) delete request.topOrigin;
      }
      const answer = await ask(request);
      if (answer.ok && ["new", "changed", "unknown"].includes(answer.state)) {
        const pending = { origin, user, password, state: answer.state, recordIdentifier: answer.recordIdentifier, at: Date.now() };
        pendingSaves.set(tabId, pending);
        // A page that does not navigate (a single-page app) shows the bar now; one that does
        // asks for it when the next page's top frame loads.
        api.tabs.sendMessage(tabId, { type: "showSaveBar", user, host: new URL(origin).host, state: answer.state }, { frameId: 0 })
          .catch(() => {});
      }
      return { ok: true, state: answer.ok ? answer.state : "error" };
    }
    case "passkeyList": case "passkeyGet": case "passkeyCreate":
      return passkey(message, sender, origin);
    case "passkeyUndo":
      if (sender.frameId !== 0) return { ok: false, error: { code: "forbidden", message: "only the top page's notice" } };
      return ask({ type: "passkeyUndo", origin, recordIdentifier: String(message.recordIdentifier ?? ""), credentialId: String(message.credentialId ?? "") });
    case "passkeySignal":
      return passkeySignal(message, sender, origin);
    case "pendingSave": {
      if (sender.frameId !== 0) return { ok: true, pending: null };
      const pending = pendingSave(tabId, origin);
      const card = pendingCardSaves.get(tabId);
      return {
        ok: true, pending: pending && { user: pending.user, host: new URL(pending.origin).host, state: pending.state },
        card: card && Date.now() - card.at <= PENDING_SAVE_MS ? cardBar(card) : null,
      };
    }
    case "cardSubmitted": {
      // Only from an https page (or localhost); held in memory until the person decides, at
      // most two minutes, in this tab only.
      if (!isSecureOrigin(origin)) return { ok: true };
      const card = message.card ?? {};
      const pending = {
        origin, at: Date.now(), number: String(card.number ?? "").slice(0, 32), cardholder: String(card.cardholder ?? "").slice(0, 256),
        expiryMonth: Number.isInteger(card.expiryMonth) ? card.expiryMonth : undefined, expiryYear: Number.isInteger(card.expiryYear) ? card.expiryYear : undefined,
        securityCode: typeof card.securityCode === "string" ? card.securityCode.slice(0, 8) : undefined,
      };
      pendingCardSaves.set(tabId, pending);
      api.tabs.sendMessage(tabId, { type: "showCardSaveBar", ...cardBar(pending) }, { frameId: 0 }).catch(() => {});
      return { ok: true };
    }
    case "cardSaveAction": {
      const pending = pendingCardSaves.get(tabId);
      pendingCardSaves.delete(tabId);
      if (!pending || sender.frameId !== 0 || message.action !== "save") return { ok: true };
      const request = { type: "saveCard", origin: pending.origin, number: pending.number, cardholder: pending.cardholder };
      if (pending.expiryMonth) request.expiryMonth = pending.expiryMonth;
      if (pending.expiryYear) request.expiryYear = pending.expiryYear;
      // The security code is kept only when the person ticked it.
      if (message.withCode === true && pending.securityCode) request.securityCode = pending.securityCode;
      return ask(request);
    }
    case "saveAction": {
      const pending = pendingSaves.get(tabId);
      pendingSaves.delete(tabId);
      if (!pending || sender.frameId !== 0) return { ok: false, error: { code: "notFound", message: "nothing to save" } };
      if (message.action === "never") {
        const { neverSave } = await settings();
        await api.storage.local.set({ neverSave: [...new Set([...neverSave, pending.origin])] });
        return { ok: true };
      }
      if (message.action === "save" && pending.state === "new") {
        return ask({ type: "save", origin: pending.origin, user: pending.user, password: pending.password });
      }
      if (message.action === "save" && pending.recordIdentifier) {
        return ask({ type: "update", origin: pending.origin, recordIdentifier: pending.recordIdentifier, password: pending.password });
      }
      return { ok: true };
    }
    default:
      return { ok: false, error: { code: "forbidden", message: "not a request a page's frame may make" } };
  }
}

/** Sends the chosen card to the tab's other frames of `origin` (never another origin's). */
async function fillSameOriginFrames(tabId, chosenFrame, origin, item) {
  const frames = (await api.webNavigation?.getAllFrames({ tabId })) ?? [];
  for (const frame of frames) {
    let frameOrigin = null;
    try { frameOrigin = new URL(frame.url).origin; } catch { frameOrigin = null; }
    if (frame.frameId === chosenFrame || frameOrigin !== origin) continue;
    api.tabs.sendMessage(tabId, { type: "fillCardFrame", origin, item }, { frameId: frame.frameId }).catch(() => {});
  }
}

// ---- The logins Coffer filled, per tab: what an automatic passkey upgrade needs (§13.5.2). ----

const UPGRADE_WINDOW_MS = 5 * 60 * 1000;

/** Remembers the login Coffer filled in a tab's top page — never its password — in session
 * storage (memory only, kept while the service worker sleeps). */
async function rememberFill(tabId, origin, answer) {
  if (!answer.recordIdentifier || !api.storage.session) return;
  await api.storage.session.set({ [`fill:${tabId}`]: { origin, recordIdentifier: answer.recordIdentifier, user: answer.user ?? "", at: Date.now() } });
}

/** The login Coffer filled in this tab within five minutes on this page's host, for `user`. */
async function recentFill(tabId, origin, user) {
  if (!api.storage.session) return null;
  const key = `fill:${tabId}`;
  const fill = (await api.storage.session.get(key))[key];
  if (!fill || Date.now() - fill.at > UPGRADE_WINDOW_MS || fill.user !== user) return null;
  return new URL(fill.origin).host === new URL(origin).host ? fill : null;
}

api.tabs.onRemoved.addListener((tabId) => { api.storage.session?.remove(`fill:${tabId}`); });

// ---- Passkeys: the WebAuthn client's part (SPEC.md §13.5.1). ----

const b64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const strings = (list, limit) => Array.isArray(list) ? list.slice(0, limit).map(String) : [];

/** A passkey request of a frame: the origin is the browser's; a frame of another origin than
 * its tab's page needs the top page's delegation (`allow="publickey-credentials-…"`); the
 * client data is built here, never taken from the page; the rpId defaults to the origin's host
 * and the host checks it against the origin. */
async function passkey(message, sender, origin) {
  let top = null;
  try { top = new URL(sender.tab.url).origin; } catch { top = null; }
  const crossOrigin = sender.frameId !== 0 && top !== origin;
  if (crossOrigin && message.delegated !== true) {
    return { ok: false, error: { code: "forbidden", message: "a frame of another site may not use passkeys unless the page allows it" } };
  }
  const rpId = typeof message.rpId === "string" ? message.rpId : new URL(origin).hostname;
  const allowed = strings(message.type === "passkeyCreate" ? message.excludeCredentials : message.allowCredentials, 64);
  const userVerification = ["required", "preferred", "discouraged"].includes(message.userVerification) ? message.userVerification : "preferred";
  if (message.type === "passkeyList") {
    return ask({ type: "passkeyList", origin, rpId, credentials: allowed, unlock: message.unlock === true });
  }
  if (typeof message.challenge !== "string" || message.challenge.length < 22 || message.challenge.length > 5462) {
    return { ok: false, error: { code: "forbidden", message: "the challenge must be 16 to 4096 bytes" } };
  }
  const clientData = { type: message.type === "passkeyCreate" ? "webauthn.create" : "webauthn.get", challenge: message.challenge, origin, crossOrigin };
  if (crossOrigin && top) clientData.topOrigin = top;
  const clientDataJSON = new TextEncoder().encode(JSON.stringify(clientData));
  const clientDataHash = b64url(await crypto.subtle.digest("SHA-256", clientDataJSON));
  const request = { type: message.type, origin, rpId, clientDataHash, userVerification, credentials: allowed };
  if (message.type === "passkeyGet") request.recordIdentifier = String(message.recordIdentifier ?? "");
  else {
    const user = message.user ?? {};
    request.user = { id: String(user.id ?? ""), name: String(user.name ?? ""), displayName: String(user.displayName ?? "") };
    request.algorithms = Array.isArray(message.algorithms) ? message.algorithms.slice(0, 32).map(Number).filter(Number.isInteger) : [];
  }
  if (message.type === "passkeyCreate" && message.conditional === true) {
    // An upgrade: the top page only, right after Coffer filled this account's login there.
    const fill = sender.frameId === 0 ? await recentFill(sender.tab.id, origin, request.user.name) : null;
    if (!fill) return { ok: false, error: { code: "forbidden", message: "no login of this account was filled here by Coffer within five minutes" } };
    request.conditional = true;
    request.recordIdentifier = fill.recordIdentifier;
  }
  const answer = await ask(request);
  return answer.ok ? { ...answer, clientDataJSON: b64url(clientDataJSON) } : answer;
}

/** A page's Signal API call (§13.5.3): from the top page, its origin the browser's; the host
 * checks the rpId against it, rate-limits and drops it while locked. */
async function passkeySignal(message, sender, origin) {
  if (sender.frameId !== 0) return { ok: true };  // a frame's signal is dropped
  if (typeof message.rpId !== "string") return { ok: false, error: { code: "badRequest", message: "no rpId" } };
  const request = { type: "passkeySignal", origin, rpId: message.rpId, signal: String(message.signal ?? "") };
  if (typeof message.credentialId === "string") request.credentialId = message.credentialId;
  if (typeof message.userId === "string") request.userId = message.userId;
  if (Array.isArray(message.allAcceptedCredentialIds)) request.allAcceptedCredentialIds = strings(message.allAcceptedCredentialIds, 256);
  if (typeof message.name === "string") request.name = message.name;
  if (typeof message.displayName === "string") request.displayName = message.displayName;
  return ask(request);
}

// ---- Requests of the popup. ----

/** The http(s) origin of the active tab, as the browser reports it; null otherwise. */
async function activeTabOrigin() {
  const [tab] = await api.tabs.query({ active: true, currentWindow: true });
  let origin = null;
  try { origin = tab?.url ? new URL(tab.url).origin : null; } catch { origin = null; }
  return origin && /^https?:/.test(origin) ? origin : null;
}

async function fromPopup(message) {
  switch (message.type) {
    case "clipboardCopied":
      return clearClipboardLater();
    case "status":
      return ask({ type: "hello" });
    case "suggest": {
      const [tab] = await api.tabs.query({ active: true, currentWindow: true });
      const origin = await activeTabOrigin();
      if (!origin) return { ok: true, identities: [], origin: null };
      return { ...(await ask({ type: "suggest", origin })), origin, tabId: tab.id };
    }
    case "audit": {
      const origin = await activeTabOrigin();
      return origin ? ask({ type: "audit", origin }) : { ok: true, logins: [] };
    }
    case "search":
      return ask({ type: "search", query: String(message.query ?? "") });
    case "reveal":
      return ask({ type: "reveal", recordIdentifier: String(message.recordIdentifier ?? "") });
    case "attachments":
      return ask({ type: "attachments", recordIdentifier: String(message.recordIdentifier ?? "") });
    case "attachmentGet":
      return ask({ type: message.type, recordIdentifier: String(message.recordIdentifier ?? ""), name: String(message.name ?? "") });
    case "attachmentSave":  // the vault page's, of one's own item or a team's (`vault`)
      return ask({ type: message.type, recordIdentifier: String(message.recordIdentifier ?? ""), name: String(message.name ?? ""),
                   vault: typeof message.vault === "string" ? message.vault : null });
    case "attachmentAdd":  // the vault page's: a file the person chose, base64
      return ask({ type: message.type, recordIdentifier: String(message.recordIdentifier ?? ""), name: String(message.name ?? ""),
                   mediaType: String(message.mediaType ?? ""), content: String(message.content ?? ""),
                   vault: typeof message.vault === "string" ? message.vault : null });
    case "fillTab":
      // The tab's top frame asks for the fill itself, so the origin is again the browser's.
      return api.tabs.sendMessage(message.tabId, { type: "fillChosen", recordIdentifier: message.recordIdentifier }, { frameId: 0 });
    case "generate":
      return ask({ type: "generate", length: Number(message.length) || 20 });
    case "lock":
      return ask({ type: "lock" });
    case "openVault":
      await openVault();
      return { ok: true };
    case "settings":
      return { ok: true, ...(await settings()) };
    case "setFillOnLoad":
      await api.storage.local.set({ fillOnLoad: Boolean(message.value) });
      return { ok: true };
    default:
      return { ok: false, error: { code: "badRequest", message: "unknown request" } };
  }
}

// ---- The clipboard: a copied secret is cleared after the CLI's delay, even when the popup or
// page that copied it has closed since (SPEC.md §13.7). ----

const CLEAR_CLIPBOARD = "coffer-clear-clipboard";

/** After the popup or the vault page copied a secret: an alarm (which outlives this worker, stopped
 * by the browser when idle) clears the clipboard after `$COFFER_CLIP_TIME` seconds (the host's; 45). */
async function clearClipboardLater() {
  const form = await ask({ type: "vaultForm" });
  const seconds = form?.ok && Number.isFinite(form.clipboardSeconds) ? form.clipboardSeconds : 45;
  await api.alarms.create(CLEAR_CLIPBOARD, { when: Date.now() + seconds * 1000 });
  return { ok: true, seconds };
}

/** Empties the clipboard now: here, where there is a document (Firefox's background page); else
 * in an offscreen document opened for it (Chromium's worker has none). */
async function clearClipboardNow() {
  await api.alarms.clear(CLEAR_CLIPBOARD);
  if (typeof document !== "undefined") return { ok: emptyClipboard(document) };
  if (!(await api.offscreen.hasDocument())) {
    await api.offscreen.createDocument({ url: "offscreen.html", reasons: ["CLIPBOARD"], justification: "Clear a copied secret after the delay" });
  }
  const answer = await api.runtime.sendMessage({ type: "offscreenEmptyClipboard" }).catch(() => null);
  await api.offscreen.closeDocument().catch(() => {});
  return { ok: Boolean(answer?.ok) };
}

api.alarms.onAlarm.addListener((alarm) => { if (alarm.name === CLEAR_CLIPBOARD) clearClipboardNow(); });

// ---- The vault page (SPEC.md §13.7): its requests, and the ways to open it. ----

/** What the vault page may ask, and only it (and never a content script: a page that took one
 * over must not list or read the vault). Each is passed on as it is, its members checked by the host. */
const VAULT_REQUESTS = new Set(["vaultItems", "vaultForm", "vaultItem", "vaultCode", "vaultSave", "vaultDelete", "vaultAudit", "attachmentSave", "attachmentAdd", "attachmentPart", "unlock", "lock", "generate"]);

async function fromVaultPage(message) {
  if (message.type === "status") return ask({ type: "hello" });
  if (message.type === "clipboardCopied") return clearClipboardLater();
  if (message.type === "clipboardClear") return clearClipboardNow();
  if (!VAULT_REQUESTS.has(message.type)) return { ok: false, error: { code: "badRequest", message: "unknown request" } };
  const request = { ...message };
  delete request.id;
  if (message.type === "generate") {
    // The item's site chooses the rule (SPEC §12.1), as a page's does for its own fields.
    request.length = Number(message.length) || 20;
    if (typeof message.origin !== "string" || !/^https?:\/\/[^/]+$/.test(message.origin)) delete request.origin;
  }
  return (request.type === "vaultItems" && firstRowsAskedAhead(request)) || ask(request);
}

// The first rows of a page being opened are asked for at the click (SPEC.md §13.7): the host
// answers while the browser makes the tab and loads the page, which then takes the answer from
// here. Kept for one request, and only briefly: an older list would be shown until the page's
// next look at the vault.
const FIRST_ROWS_KEPT_MS = 2000;
let firstRowsAhead = null;

function askFirstRowsAhead() {
  firstRowsAhead = { answer: ask(VAULT_FIRST_REQUEST), until: Date.now() + FIRST_ROWS_KEPT_MS };
}

/** The answer asked ahead when `request` is the one asked and it is recent; null otherwise.
 * Either way it is let go: the next list request is the host's. */
function firstRowsAskedAhead(request) {
  const ahead = firstRowsAhead;
  firstRowsAhead = null;
  return ahead && Date.now() <= ahead.until && JSON.stringify(request) === JSON.stringify(VAULT_FIRST_REQUEST) ? ahead.answer : null;
}

/** Shows the vault page: the tab that has it, else a new tab (its first rows asked for at once). */
async function openVault() {
  const url = api.runtime.getURL("vault.html");
  const [open] = await api.tabs.query({ url: url + "*" }).catch(() => []);
  if (open) {
    try {
      await api.tabs.update(open.id, { active: true });
      if (open.windowId !== undefined) await api.windows.update(open.windowId, { focused: true }).catch(() => {});
      return open.id;
    } catch { /* closed meanwhile: a new one */ }
  }
  askFirstRowsAhead();
  return (await api.tabs.create({ url })).id;
}
globalThis.cofferOpenVault = openVault;  // for tests (a headless browser has no toolbar menu)

const VAULT_MENU = "coffer-open-vault";

// ---- Insert any text: the context menu and its chooser (SPEC.md §13.5.4). ----

const INSERT_MENU = "coffer-insert";

function createInsertMenu() {
  api.contextMenus?.create({ id: INSERT_MENU, title: "Insert from Coffer…", contexts: ["editable"] }, () => void api.runtime.lastError);
  // The toolbar button's own menu: "Open vault".
  api.contextMenus?.create({ id: VAULT_MENU, title: "Open vault", contexts: ["action"] }, () => void api.runtime.lastError);
}
api.runtime.onInstalled.addListener(createInsertMenu);
api.runtime.onStartup?.addListener(createInsertMenu);

/** A right-click on an editable field chose "Insert from Coffer…": the chooser opens in a window
 * of its own; the frame the person right-clicked is kept (in session memory) under a token only
 * the chooser's address carries. */
async function openInsertChooser(info, tab) {
  if (info.menuItemId !== INSERT_MENU || !tab?.id) return;
  const token = crypto.randomUUID();
  await api.storage.session.set({ [`insert:${token}`]: { tabId: tab.id, frameId: info.frameId ?? 0, at: Date.now() } });
  await api.windows.create({ url: api.runtime.getURL(`insert.html#${token}`), type: "popup", width: 440, height: 560 });
}
api.contextMenus?.onClicked.addListener((info, tab) => {
  if (info.menuItemId === VAULT_MENU) openVault(); else openInsertChooser(info, tab);
});
// For tests driving the service worker (a headless browser shows no context menu).
globalThis.cofferInsertMenu = openInsertChooser;

async function fromInsertChooser(message) {
  switch (message.type) {
    case "textItems":
      return ask({ type: "textItems", query: String(message.query ?? "").slice(0, 256) });
    case "textMembers":
      return ask({ type: "textMembers", recordIdentifier: String(message.recordIdentifier ?? "") });
    case "insertText": {
      // The text goes to the right-clicked frame, never back to the chooser; the host is told
      // no page (SPEC.md §13.3).
      const key = `insert:${String(message.token ?? "")}`;
      const target = (await api.storage.session.get(key))[key];
      await api.storage.session.remove(key);
      if (!target || Date.now() - target.at > 10 * 60 * 1000) return { ok: false, error: { code: "notFound", message: "the field is gone" } };
      const answer = await ask({ type: "insertText", recordIdentifier: String(message.recordIdentifier ?? ""), member: String(message.member ?? "") });
      if (!answer.ok) return answer;
      await api.tabs.sendMessage(target.tabId, { type: "insertText", text: answer.text }, { frameId: target.frameId });
      return { ok: true };
    }
    default:
      return { ok: false, error: { code: "badRequest", message: "unknown request" } };
  }
}

api.runtime.onMessage.addListener((message, sender, respond) => {
  if (sender.id !== api.runtime.id || typeof message !== "object" || message === null) return false;
  const handler = isPopup(sender) ? fromPopup : isVaultPage(sender) ? fromVaultPage : isInsertChooser(sender) ? fromInsertChooser
    : sender.tab ? fromContentScript : null;
  if (!handler) return false;
  handler(message, sender).then(respond, (error) => respond({ ok: false, error: { code: "failed", message: String(error) } }));
  return true;  // answered asynchronously
});

// ---- The keyboard command: the focused frame asks for its own host-level login. ----

async function command(name, tab) {
  if (name === "open-vault") return openVault();
  if (name !== "fill-login" || !tab?.id) return;
  await api.tabs.sendMessage(tab.id, { type: "commandFill" }).catch(() => {});
}

api.commands?.onCommand.addListener((name, tab) => { command(name, tab); });
// For tests driving the service worker through the DevTools protocol (a headless browser has
// no keyboard shortcuts): the same handler the shortcut runs.
globalThis.cofferCommand = command;
