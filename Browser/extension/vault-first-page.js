// The vault page's first request, made from the page's head before the rest is parsed: the host
// builds its table of the vault (at 100,000 items, most of the wait for the first rows) while the
// page loads. The list (vault-list.js) takes this answer when its first request is this one:
// the whole list, by name, as the page opens unless the browser restored other filters.
"use strict";

let firstPage = (() => {
  const request = { type: "vaultItems", query: "", kind: "", sort: "name", offset: 0, limit: 100 };
  const answer = (globalThis.browser ?? globalThis.chrome).runtime.sendMessage(request)
    .catch((error) => ({ ok: false, error: { code: "failed", message: String(error) } }));
  return { key: JSON.stringify(request), answer };
})();
