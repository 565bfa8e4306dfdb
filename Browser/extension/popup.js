// The toolbar popup: this tab's logins (fill, copy), a search of the vault, a generator, the
// fill-on-load setting and Lock. It talks only to the service worker.
"use strict";

const api = globalThis.browser ?? globalThis.chrome;
const send = (message) => api.runtime.sendMessage(message);
const $ = (id) => document.getElementById(id);
let tabId = null;

function say(text) { $("message").textContent = text; }

function row(identity, { canFill }) {
  const item = document.createElement("li");
  const who = document.createElement("span");
  who.className = "who";
  who.textContent = identity.user || "(no user name)";
  const site = document.createElement("span");
  site.className = "site";
  site.textContent = (identity.vault ? `${identity.vault}: ` : "") + identity.serviceIdentifier + (identity.match === "registrable-domain" ? " · another host"
    : identity.match === "shared-credential" ? ` · saved for ${identity.savedFor}` : "");
  who.append(site);
  item.append(who);
  if (canFill) {
    const fill = document.createElement("button");
    fill.textContent = "Fill";
    fill.addEventListener("click", async () => {
      const answer = await send({ type: "fillTab", tabId, recordIdentifier: identity.recordIdentifier });
      if (answer?.ok) window.close(); else say(answer?.error?.message ?? "could not fill");
    });
    item.append(fill);
  }
  const copy = document.createElement("button");
  copy.textContent = "Copy";
  copy.addEventListener("click", async () => {
    const answer = await send({ type: "reveal", recordIdentifier: identity.recordIdentifier });
    if (!answer?.ok) return say(answer?.error?.message ?? "could not copy");
    await navigator.clipboard.writeText(answer.password);
    const clearing = await send({ type: "clipboardCopied" });
    say(`Copied; cleared from the clipboard in ${clearing?.seconds ?? 45} seconds.`);
  });
  item.append(copy);
  item.dataset.record = identity.recordIdentifier;
  return item;
}

/** What audit flags among this tab's logins (unlocked only): a "Change password" button that
 * opens the page where that password is changed. */
async function flagTabLogins() {
  const answer = await send({ type: "audit" });
  for (const login of answer?.logins ?? []) {
    const item = [...$("site").children].find((element) => element.dataset.record === login.recordIdentifier);
    if (!item || !/^https?:\/\//.test(login.changePasswordURL ?? "")) continue;
    const flag = document.createElement("span");
    flag.className = "flag";
    flag.textContent = login.findings.join(", ");
    const change = document.createElement("button");
    change.textContent = "Change password";
    change.title = login.changePasswordURL;
    change.addEventListener("click", () => { api.tabs.create({ url: login.changePasswordURL }); window.close(); });
    item.append(flag, change);
  }
}

async function load() {
  const status = await send({ type: "status" });
  $("state").textContent = status?.ok ? (status.locked ? "🔒 locked" : "unlocked") : "host unavailable";
  const site = await send({ type: "suggest" });
  tabId = site?.tabId ?? null;
  $("site-title").textContent = site?.origin ? `Logins for ${new URL(site.origin).host}` : "No site in this tab";
  $("site").replaceChildren(...(site?.identities ?? []).map((identity) => row(identity, { canFill: true })));
  await flagTabLogins();
  const { fillOnLoad } = await send({ type: "settings" });
  $("fill-on-load").checked = Boolean(fillOnLoad);
}

$("query").addEventListener("input", async () => {
  const query = $("query").value.trim();
  if (!query) return $("results").replaceChildren();
  const answer = await send({ type: "search", query });
  $("results").replaceChildren(...(answer?.identities ?? []).map((identity) => row(identity, { canFill: false })));
});

$("generate").addEventListener("click", async () => {
  const answer = await send({ type: "generate", length: 20 });
  if (!answer?.ok) return say(answer?.error?.message ?? "could not generate");
  $("generated").textContent = answer.password;
  if (await navigator.clipboard.writeText(answer.password).then(() => true, () => false)) await send({ type: "clipboardCopied" });
});

$("lock").addEventListener("click", async () => {
  await send({ type: "lock" });
  $("state").textContent = "🔒 locked";
});

$("open-vault").addEventListener("click", async () => { await send({ type: "openVault" }); window.close(); });

$("fill-on-load").addEventListener("change", () => send({ type: "setFillOnLoad", value: $("fill-on-load").checked }));

load();
