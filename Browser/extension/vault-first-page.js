// The vault page's first request (SPEC.md §13.7): the whole list by name, its first 100 rows, as
// the page opens unless the browser restored other filters. Loaded twice:
// - by the worker, which asks it the moment a person opens the page (background.js, openVault),
//   so the host answers while the browser makes the tab;
// - first in the page's head, which asks it before the rest is parsed (the worker hands over
//   the answer it has, else asks the host). The list (vault-list.js) takes this answer when its
//   first request is this one.
"use strict";

const VAULT_FIRST_REQUEST = Object.freeze({ type: "vaultItems", query: "", kind: "", sort: "name", offset: 0, limit: 100 });

let firstPage = globalThis.document && location.pathname.endsWith("/vault.html") ? (() => {
  const answer = (globalThis.browser ?? globalThis.chrome).runtime.sendMessage(VAULT_FIRST_REQUEST)
    .catch((error) => ({ ok: false, error: { code: "failed", message: String(error) } }));
  return { key: JSON.stringify(VAULT_FIRST_REQUEST), answer };
})() : null;
