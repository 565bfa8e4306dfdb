// The vault page (SPEC.md §13.7): every item of one's own vault and of each team, found by
// name, kind and vault; an item's every member with Copy and Reveal; its one-time code as
// `coffer otp` shows it; create, edit and delete read by the host with the library's rules;
// an edit conflict shown, never lost; the lock state followed within half a second. It talks
// only to the service worker, which forwards what this page may ask.
//
// The page's scripts, loaded in this order as classic scripts sharing one scope:
// vault-first-page.js (in the head: the list's first request), this one (what they share),
// vault-list.js, vault-item.js, vault-edit.js, vault-audit.js, vault-lock.js (which starts the page).
"use strict";

const api = globalThis.browser ?? globalThis.chrome;
const send = (message) => api.runtime.sendMessage(message).catch((error) => ({ ok: false, error: { code: "failed", message: String(error) } }));
const $ = (id) => document.getElementById(id);

const ROW_HEIGHT = 44;
const PAGE = 100;
const KIND_NAMES = { login: "Login", note: "Note", card: "Card", identity: "Identity", "ssh-key": "SSH key", secret: "Secret" };

/** Everything the page holds; `item` and the form are dropped the moment the vault locks. */
const state = {
  form: null,            // the host's vaultForm answer: kinds, match modes, member lines, clipboard delay
  locked: true,
  total: 0,
  pages: new Map(),      // offset → rows of the current query
  generation: 0,         // bumps with every new query, so a late answer of an old one is dropped
  active: -1,            // the row the keyboard is on
  item: null,            // the open item (all its members)
  editing: null,         // {item|null, kind} while the form is open
  codeTimer: null,
  copied: false,         // a secret was copied and its clearing is pending
  changeToken: undefined, // the host's token of the vault's last change, as last seen
  listedToken: undefined, // the token the list's first page was read at (SPEC.md §13.7)
};

function say(text) { $("message").textContent = text; }
function element(tag, properties = {}, ...children) {
  const made = Object.assign(document.createElement(tag), properties);
  made.append(...children.filter((child) => child !== null && child !== undefined));
  return made;
}
function failure(answer, fallback) { return answer?.error?.message ?? fallback; }
function text(value) { return element("span", { className: "value", textContent: value }); }
