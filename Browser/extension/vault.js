// The vault page (SPEC.md §13.7): every item of one's own vault and of each team, found by
// name, kind and vault; an item's every member with Copy and Reveal; its one-time code as
// `coffer otp` shows it; create, edit and delete read by the host with the library's rules;
// an edit conflict shown, never lost; the lock state followed within half a second. It talks
// only to the service worker, which forwards what this page may ask.
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
  clipboardTimer: null,
  changeToken: undefined, // the host's token of the vault's last change, as last seen
};

function say(text) { $("message").textContent = text; }
function element(tag, properties = {}, ...children) {
  const made = Object.assign(document.createElement(tag), properties);
  made.append(...children.filter((child) => child !== null && child !== undefined));
  return made;
}
function failure(answer, fallback) { return answer?.error?.message ?? fallback; }

// ---- The query and the list (rendered by window: only the rows in view exist). ----

function query() {
  const vault = $("vault").value;
  const request = { query: $("query").value.trim(), kind: $("kind").value, sort: $("sort").value };
  if (vault !== "*") request.vault = vault;
  return request;
}

async function fetchPage(offset, generation) {
  if (state.pages.has(offset)) return;
  state.pages.set(offset, null);  // asked for
  const answer = await send({ type: "vaultItems", ...query(), offset, limit: PAGE });
  if (generation !== state.generation) return;
  if (!answer?.ok) { state.pages.delete(offset); return say(failure(answer, "the list could not be read")); }
  state.pages.set(offset, answer.items);
  state.total = answer.total;
  updateTeams(answer.teams ?? []);
  $("count").textContent = answer.namesLocked ? "" : `(${answer.total})`;
  $("list").setAttribute("aria-busy", "false");
  if (answer.namesLocked) say("Locked, and suggestions are off on this device: unlock to see your items.");
  render();
}

function rowAt(index) {
  const page = state.pages.get(index - (index % PAGE));
  return page ? page[index % PAGE] : undefined;
}

/** Starts the list again for the current search, filters and order. */
function requery() {
  state.generation += 1;
  state.pages.clear();
  $("list").replaceChildren();
  $("list").removeAttribute("aria-activedescendant");
  state.active = -1;
  $("scroller").scrollTop = 0;
  $("list").setAttribute("aria-busy", "true");
  return fetchPage(0, state.generation);
}

/** Draws the rows in view. Rows already drawn are kept and updated, never replaced: a click
 * whose press re-renders the list (focusing it does) must land on the row it pressed. */
function render() {
  const list = $("list"), scroller = $("scroller");
  list.style.height = `${state.total * ROW_HEIGHT}px`;
  const first = Math.max(0, Math.floor(scroller.scrollTop / ROW_HEIGHT) - 5);
  const last = Math.min(state.total, Math.ceil((scroller.scrollTop + scroller.clientHeight) / ROW_HEIGHT) + 5);
  const drawn = new Map([...list.children].map((node) => [node.id, node]));
  const wanted = new Set();
  for (let index = first; index < last; index += 1) {
    const row = rowAt(index), id = `row-${index}`;
    if (row === undefined) fetchPage(index - (index % PAGE), state.generation);
    // A row being read again (the vault changed elsewhere) keeps its old look until its page
    // comes: the list never blanks under a person's pointer.
    if (!row) { if (drawn.has(id)) wanted.add(id); continue; }
    wanted.add(id);
    let node = drawn.get(id);
    if (!node || node.dataset.record !== `${row.vault ?? ""}/${row.recordIdentifier}`) {
      node?.remove();
      node = option(row, index);
      list.append(node);
    }
    node.classList.toggle("active", index === state.active);
    node.setAttribute("aria-selected", String(state.item?.recordIdentifier === row.recordIdentifier && (state.item?.vault ?? null) === (row.vault ?? null)));
    node.setAttribute("aria-setsize", String(state.total));
  }
  for (const [id, node] of drawn) if (!wanted.has(id)) node.remove();
  // When the first rows were on screen, from the page's start (the benchmark's figure).
  if (wanted.size && !performance.getEntriesByName("coffer-first-rows").length) performance.mark("coffer-first-rows");
  const active = state.active >= 0 ? `row-${state.active}` : "";
  if (active && $(active)) list.setAttribute("aria-activedescendant", active); else list.removeAttribute("aria-activedescendant");
}

function option(row, index) {
  const title = element("span", { className: "title", textContent: row.title || "(no name)" });
  const where = [KIND_NAMES[row.kind] ?? row.kind, row.user, row.site !== row.title ? row.site : "", row.vault ? `team ${row.vault}` : ""].filter(Boolean);
  const made = element("div", { id: `row-${index}`, className: "option" }, title, element("span", { className: "sub", textContent: where.join(" · ") }));
  made.dataset.record = `${row.vault ?? ""}/${row.recordIdentifier}`;
  made.setAttribute("role", "option");
  made.setAttribute("aria-posinset", String(index + 1));
  made.style.top = `${index * ROW_HEIGHT}px`;
  made.addEventListener("click", () => { moveTo(index); open(row); });
  return made;
}

function moveTo(index) {
  if (state.total === 0) return;
  state.active = Math.max(0, Math.min(state.total - 1, index));
  const scroller = $("scroller"), top = state.active * ROW_HEIGHT;
  if (top < scroller.scrollTop) scroller.scrollTop = top;
  else if (top + ROW_HEIGHT > scroller.scrollTop + scroller.clientHeight) scroller.scrollTop = top + ROW_HEIGHT - scroller.clientHeight;
  render();
}

$("list").addEventListener("keydown", (event) => {
  const visible = Math.max(1, Math.floor($("scroller").clientHeight / ROW_HEIGHT) - 1);
  const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: visible, PageUp: -visible };
  if (event.key in moves) moveTo((state.active < 0 ? -1 : state.active) + moves[event.key]);
  else if (event.key === "Home") moveTo(0);
  else if (event.key === "End") moveTo(state.total - 1);
  else if (event.key === "Enter" && state.active >= 0 && rowAt(state.active)) open(rowAt(state.active), { focus: true });
  else return;
  event.preventDefault();
});
$("list").addEventListener("focus", () => { if (state.active < 0 && state.total > 0) moveTo(0); });
$("scroller").addEventListener("scroll", () => requestAnimationFrame(render));

let searchTimer = null;
$("query").addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(requery, 60); });
for (const id of ["kind", "vault", "sort"]) $(id).addEventListener("change", requery);

function updateTeams(teams) {
  const select = $("vault");
  const known = new Set([...select.options].map((o) => o.value));
  for (const team of teams) if (!known.has(team)) select.append(element("option", { value: team, textContent: `Team ${team}` }));
}

// ---- An item. ----

async function open(row, { focus = false } = {}) {
  const answer = await send({ type: "vaultItem", recordIdentifier: row.recordIdentifier, vault: row.vault ?? null });
  if (!answer?.ok) return say(failure(answer, "the item could not be opened"));
  showItem(answer.item);
  if (focus) $("detail").focus();
}

function forget() {
  clearInterval(state.codeTimer);
  state.codeTimer = null;
  state.item = null;
  state.editing = null;
  $("detail-title").textContent = "No item open";
  $("detail-body").replaceChildren(element("p", { className: "hint", textContent: "Choose an item in the list (arrow keys and Enter, or a click)." }));
  if ($("conflict").open) $("conflict").close();
}

function showItem(item) {
  forget();
  state.item = item;
  $("detail-title").textContent = item.title || "(no name)";
  const meta = `${KIND_NAMES[item.kind] ?? item.kind} · ${item.vault ? `team ${item.vault}` : "my vault"} · changed ${item.modified.slice(0, 10)} · revision ${item.revision}`;
  const members = element("dl", { className: "members" });
  const add = (label, ...content) => members.append(element("dt", { textContent: label }), element("dd", {}, ...content));
  if (item.name) add("Name", text(item.name));
  if (item.user) add("User", text(item.user), copyButton("user", () => item.user));
  if (item.password) add("Password", ...secret("password", item.password));
  if (item.otp) add("One-time code", ...oneTimeCode(item));
  for (const line of item.members) {
    line.values.filter(Boolean).forEach((value, n) => add(n === 0 ? line.key : "", ...(line.masked ? secret(line.key, value) : [text(value), copyButton(line.key, () => value)])));
  }
  if (item.sites.length) add("Sites", ...item.sites.map((site) => text(site)));
  if (item.tags.length) add("Tags", text(item.tags.join(", ")));
  if (item.kind === "login") add("Match", text(item.match));
  for (const field of item.fields) add(field.name, ...(field.hidden ? secret(field.name, field.value) : [text(field.value), copyButton(field.name, () => field.value)]));
  if (item.notes) add("Notes", element("pre", { className: "notes", textContent: item.notes }));
  if (item.passkey) add("Passkey", text(`${item.passkey.relyingParty} · ${item.passkey.user} · created ${item.passkey.created.slice(0, 10)}`));
  if (item.secretService) {
    add("Collection", text(item.secretService.collection));
    for (const [name, value] of Object.entries(item.secretService.attributes)) add(`attribute ${name}`, text(value));
  }
  for (const attachment of item.attachments) {
    // Saved into the Downloads folder by the host (sealed until then; 0600, never over a file).
    const save = item.vault ? null : element("button", { type: "button", textContent: "Save to Downloads" });
    save?.setAttribute("aria-label", `Save ${attachment.name} to Downloads`);
    save?.addEventListener("click", async () => {
      const answer = await send({ type: "attachmentSave", recordIdentifier: item.recordIdentifier, name: attachment.name });
      say(answer?.ok ? `Saved as ${answer.path}` : failure(answer, "not saved"));
    });
    add("Attachment", text(`${attachment.name} (${attachment.mediaType}, ${attachment.size} bytes)`), save);
  }
  item.passwordHistory.forEach((old, n) => add(n === 0 ? "Earlier passwords" : "", ...secret(`earlier password ${n + 1}`, old.password), text(`until ${old.replaced.slice(0, 10)}`)));
  const findings = item.findings.length ? element("ul", {}, ...item.findings.map((f) => element("li", { className: "finding", textContent: `${f.kind}: ${f.detail}` }))) : null;
  findings?.setAttribute("aria-label", "Audit findings");
  const change = item.findings.length && /^https:\/\//.test(item.changePasswordURL ?? "")
    ? element("a", { href: item.changePasswordURL, target: "_blank", rel: "noopener noreferrer", textContent: "Change this password on the site" }) : null;
  const actions = element("div", { className: "actions" },
    element("button", { type: "button", id: "edit", textContent: "Edit", onclick: () => edit(item) }),
    element("button", { type: "button", id: "delete", textContent: "Delete", onclick: () => remove(item) }));
  $("detail-body").replaceChildren(element("p", { className: "meta", textContent: meta }), findings, change, members, actions);
  render();
}

function text(value) { return element("span", { className: "value", textContent: value }); }

/** A secret: masked until revealed (a toggle button), copyable without being shown. */
function secret(label, value) {
  const shown = element("span", { className: "value", textContent: "••••••••" });
  shown.setAttribute("aria-label", `${label}, hidden`);
  const reveal = element("button", { type: "button", textContent: "Reveal" });
  reveal.setAttribute("aria-pressed", "false");
  reveal.setAttribute("aria-label", `Reveal ${label}`);
  reveal.addEventListener("click", () => {
    const showing = reveal.getAttribute("aria-pressed") !== "true";
    reveal.setAttribute("aria-pressed", String(showing));
    shown.textContent = showing ? value : "••••••••";
    showing ? shown.removeAttribute("aria-label") : shown.setAttribute("aria-label", `${label}, hidden`);
    reveal.textContent = showing ? "Hide" : "Reveal";
  });
  return [shown, reveal, copyButton(label, () => value)];
}

function copyButton(label, value) {
  const button = element("button", { type: "button", textContent: "Copy" });
  button.setAttribute("aria-label", `Copy ${label}`);
  button.addEventListener("click", () => copy(label, value()));
  return button;
}

/** Copies, then clears the clipboard after the CLI's delay ($COFFER_CLIP_TIME, default 45 s),
 * as `coffer show --clip` does; a lock clears it at once. */
async function copy(label, value) {
  try {
    await navigator.clipboard.writeText(value);
  } catch {
    return say("The browser refused the clipboard.");
  }
  const seconds = state.form?.clipboardSeconds ?? 45;
  clearTimeout(state.clipboardTimer);
  state.clipboardTimer = setTimeout(clearClipboard, seconds * 1000);
  say(`Copied ${label}; the clipboard is cleared in ${seconds} seconds.`);
}

function clearClipboard() {
  clearTimeout(state.clipboardTimer);
  state.clipboardTimer = null;
  navigator.clipboard.writeText("").catch(() => {});
}

/** The code as `coffer otp` prints it at this moment: fetched again when its period rolls over,
 * the seconds left counted on the same clock the code is made from. */
function oneTimeCode(item) {
  const code = element("span", { className: "value", id: "otp-code", textContent: "······" });
  const left = element("span", { id: "otp-left" });
  left.setAttribute("aria-live", "off");
  let window = null, period = 30;
  async function refresh() {
    const answer = await send({ type: "vaultCode", recordIdentifier: item.recordIdentifier, vault: item.vault ?? null });
    if (state.item !== item) return;
    if (!answer?.ok) { code.textContent = "—"; return say(failure(answer, "no code")); }
    code.textContent = answer.code;
    period = answer.period ?? 0;
    window = period ? Math.floor(Date.now() / 1000 / period) : null;
    tick();
  }
  function tick() {
    if (!period) { left.textContent = ""; return; }
    const now = Date.now() / 1000;
    if (Math.floor(now / period) !== window) { window = Math.floor(now / period); refresh(); return; }
    left.textContent = `${period - Math.floor(now % period)} s left`;
  }
  refresh();
  state.codeTimer = setInterval(tick, 250);
  return [code, left, copyButton("one-time code", () => code.textContent)];
}

// ---- Create, edit, delete. ----

function edit(item, kind = item?.kind ?? "login") {
  clearInterval(state.codeTimer);
  state.editing = { item, kind };
  $("detail-title").textContent = item ? `Edit ${item.title || "item"}` : `New ${KIND_NAMES[kind] ?? kind}`;
  const form = element("form", { className: "edit", id: "edit-form", noValidate: true });
  form.setAttribute("aria-labelledby", "detail-title");
  const row = (label, control, id) => {
    control.id = id;
    form.append(element("label", { htmlFor: id, textContent: label }), control);
    return control;
  };
  if (!item) {
    const kinds = element("select", {}, ...state.form.kinds.map((k) => element("option", { value: k, textContent: KIND_NAMES[k] ?? k, selected: k === kind })));
    kinds.addEventListener("change", () => edit(null, kinds.value));
    row("Kind", kinds, "edit-kind");
  }
  row("Name", element("input", { value: item?.name ?? "", autocomplete: "off" }), "edit-name");
  row("User", element("input", { value: item?.user ?? "", autocomplete: "off" }), "edit-user");
  const password = element("input", { type: "password", value: item?.password ?? "", autocomplete: "new-password" });
  password.id = "edit-password";
  const show = element("button", { type: "button", textContent: "Show" });
  show.setAttribute("aria-pressed", "false");
  show.setAttribute("aria-label", "Show the password");
  show.addEventListener("click", () => {
    const showing = password.type === "password";
    password.type = showing ? "text" : "password";
    show.setAttribute("aria-pressed", String(showing));
  });
  const generate = element("button", { type: "button", id: "edit-generate", textContent: "Generate" });
  generate.addEventListener("click", async () => {
    const site = $("edit-sites").value.split("\n").map((s) => s.trim()).find((s) => /^https?:\/\//.test(s));
    const answer = await send({ type: "generate", length: 20, origin: site ? new URL(site).origin : undefined });
    if (!answer?.ok) return say(failure(answer, "could not generate"));
    password.value = answer.password;
    say(`Generated ${Math.round(answer.entropyBits)} bits${answer.rules ? ` under the site's rules (${answer.rulesFrom})` : ""}.`);
  });
  form.append(element("label", { htmlFor: "edit-password", textContent: "Password" }), element("div", { className: "field-row" }, password, show, generate));
  if (kind === "card" || kind === "identity") {
    const set = element("fieldset", {}, element("legend", { textContent: KIND_NAMES[kind] }));
    for (const line of state.form.members[kind]) {
      const id = `member-${line.key.replace(/\s+/g, "-")}`;
      const values = item?.members.find((m) => m.key === line.key)?.values ?? [""];
      const control = line.key === "address" ? element("textarea", { value: values.join("\n"), rows: 2 })
        : element("input", { value: values[0] ?? "", type: line.masked ? "password" : "text", autocomplete: "off" });
      control.id = id;
      control.dataset.member = line.key;
      set.append(element("div", { className: "field-row" }, element("label", { htmlFor: id, textContent: line.key }), control));
    }
    form.append(set);
  }
  row("Sites (one per line)", element("textarea", { value: (item?.sites ?? []).join("\n"), rows: 2 }), "edit-sites");
  row("Tags (comma-separated)", element("input", { value: (item?.tags ?? []).join(", ") }), "edit-tags");
  row("Match", element("select", {}, ...state.form.matchModes.map((m) => element("option", { value: m, textContent: m, selected: m === (item?.match ?? "host") }))), "edit-match");
  row("One-time code (otpauth:// or secret)", element("input", { value: item?.otp ?? "", type: "password", autocomplete: "off" }), "edit-otp");
  row("Notes", element("textarea", { value: item?.notes ?? "", rows: 4 }), "edit-notes");
  const fields = element("fieldset", { id: "edit-fields" }, element("legend", { textContent: "Fields" }));
  const addField = (field = { name: "", value: "", hidden: false }) => {
    const n = fields.querySelectorAll(".field-row").length + 1;
    const name = element("input", { value: field.name, className: "field-name" });
    name.setAttribute("aria-label", `Field ${n} name`);
    const value = element("input", { value: field.value, className: "field-value", type: field.hidden ? "password" : "text" });
    value.setAttribute("aria-label", `Field ${n} value`);
    const hidden = element("input", { type: "checkbox", checked: field.hidden, className: "field-hidden" });
    hidden.setAttribute("aria-label", `Field ${n} is hidden`);
    hidden.addEventListener("change", () => { value.type = hidden.checked ? "password" : "text"; });
    const drop = element("button", { type: "button", textContent: "Remove" });
    drop.setAttribute("aria-label", `Remove field ${n}`);
    const line = element("div", { className: "field-row" }, name, value, hidden, drop);
    drop.addEventListener("click", () => line.remove());
    fields.insertBefore(line, more);
  };
  const more = element("button", { type: "button", id: "add-field", textContent: "Add a field" });
  more.addEventListener("click", () => addField());
  fields.append(more);
  (item?.fields ?? []).forEach(addField);
  form.append(fields);
  const errors = element("p", { id: "edit-error", className: "wide", role: "alert" });
  form.append(errors, element("div", { className: "actions wide" },
    element("button", { type: "submit", id: "save", textContent: "Save" }),
    element("button", { type: "button", id: "cancel", textContent: "Cancel", onclick: () => (item ? showItem(item) : forget()) })));
  form.addEventListener("submit", (event) => { event.preventDefault(); save(item?.revision); });
  $("detail-body").replaceChildren(form);
  form.querySelector("input, select").focus();
}

/** What the form holds, as the host reads it (SPEC.md §13.7): members as a person typed them. */
function formItem() {
  const value = (id) => $(id)?.value ?? "";
  const item = {
    kind: state.editing.item?.kind ?? value("edit-kind"), name: value("edit-name"), user: value("edit-user"), password: value("edit-password"),
    sites: value("edit-sites").split("\n").map((s) => s.trim()).filter(Boolean), tags: value("edit-tags").split(",").map((t) => t.trim()).filter(Boolean),
    match: value("edit-match"), otp: value("edit-otp"), notes: value("edit-notes"),
    fields: [...document.querySelectorAll("#edit-fields .field-row")].map((line) => ({
      name: line.querySelector(".field-name").value, value: line.querySelector(".field-value").value, hidden: line.querySelector(".field-hidden").checked,
    })).filter((field) => field.name || field.value),
  };
  const members = {};
  for (const control of document.querySelectorAll("[data-member]")) {
    members[control.dataset.member] = control.dataset.member === "address" ? control.value.split("\n").filter((l) => l.trim()) : control.value;
  }
  if (Object.keys(members).length) item.members = members;
  return item;
}

async function save(revision, { over = false } = {}) {
  const editing = state.editing;
  const item = formItem();
  const request = { type: "vaultSave", item, vault: editing.item?.vault ?? null };
  if (editing.item) Object.assign(request, { recordIdentifier: editing.item.recordIdentifier, revision });
  document.querySelectorAll("[aria-invalid]").forEach((control) => control.removeAttribute("aria-invalid"));
  const answer = await send(request);
  if (answer?.ok) {
    say(over ? "Saved over the other change." : "Saved.");
    await requery();
    const opened = await send({ type: "vaultItem", recordIdentifier: answer.recordIdentifier, vault: answer.vault ?? null });
    if (opened?.ok) showItem(opened.item);
    return;
  }
  if (answer?.error?.code === "conflict" && answer.current) return showConflict(item, answer.current);
  const message = failure(answer, "not saved");
  $("edit-error").textContent = `Not saved: ${message}`;
  const member = message.split(":")[0];
  const control = document.querySelector(`[data-member="${CSS.escape(member)}"]`) ?? $({ name: "edit-name", user: "edit-user", password: "edit-password",
    service: "edit-sites", tag: "edit-tags", otp: "edit-otp", match: "edit-match", notes: "edit-notes", kind: "edit-kind" }[member] ?? "");
  if (control) { control.setAttribute("aria-invalid", "true"); control.setAttribute("aria-describedby", "edit-error"); control.focus(); }
}

/** Both versions side by side (secrets masked); the person chooses. */
function showConflict(mine, current) {
  const rows = $("conflict-rows");
  const masked = (key) => ["password", "otp"].includes(key);
  const compare = [["name", mine.name, current.name], ["user", mine.user, current.user], ["password", mine.password, current.password],
    ["sites", mine.sites.join(", "), current.sites.join(", ")], ["tags", mine.tags.join(", "), current.tags.join(", ")],
    ["notes", mine.notes, current.notes], ["otp", mine.otp, current.otp ?? ""],
    ["fields", mine.fields.map((f) => f.name).join(", "), current.fields.map((f) => f.name).join(", ")]];
  rows.replaceChildren(...compare.filter(([, a, b]) => a !== b).map(([key, a, b]) => element("tr", {},
    element("th", { scope: "row", textContent: key }),
    element("td", { textContent: masked(key) ? "(changed, hidden)" : a }), element("td", { textContent: masked(key) ? "(changed, hidden)" : b }))));
  if (!rows.children.length) rows.append(element("tr", {}, element("td", { colSpan: 3, textContent: "Members the form does not show (a card's or identity's, a field's value) differ." })));
  const dialog = $("conflict");
  $("keep-mine").onclick = () => { dialog.close(); state.editing.item = current; save(current.revision, { over: true }); };
  $("take-theirs").onclick = () => { dialog.close(); showItem(current); say("Kept what is in the vault; your edit was discarded."); };
  $("back-to-edit").onclick = () => { dialog.close(); state.editing.item = current; $("edit-error").textContent = "Saving now writes over the other change."; };
  dialog.showModal();
}

/** Asks in the page's own dialog (a side panel may show no `confirm()`). */
function remove(item) {
  const dialog = $("confirm-delete");
  $("confirm-delete-text").textContent = `Delete “${item.title}”? It goes from every device at the next sync.`;
  $("confirm-delete-yes").onclick = () => { dialog.close(); removeConfirmed(item); };
  $("confirm-delete-no").onclick = () => dialog.close();
  dialog.showModal();
  $("confirm-delete-no").focus();
}

async function removeConfirmed(item) {
  const answer = await send({ type: "vaultDelete", recordIdentifier: item.recordIdentifier, revision: item.revision, vault: item.vault ?? null });
  if (answer?.error?.code === "conflict" && answer.current) { showItem(answer.current); return say("Not deleted: the item changed since you opened it. Here it is as it is now."); }
  if (!answer?.ok) return say(failure(answer, "not deleted"));
  forget();
  say("Deleted.");
  requery();
}

$("new").addEventListener("click", () => { if (!state.locked) edit(null); else say("Unlock first."); });

// ---- The audit: `coffer audit`'s findings, each linking to its item and its change page. ----

const FINDING_NAMES = { weak: "Weak", reused: "Reused", old: "Old", insecure: "Sent over http", breached: "In a breach", exposed: "Exposed to a removed member", unused: "Reported unused by the site" };

async function showAudit({ breaches = false } = {}) {
  forget();
  $("detail-title").textContent = "Audit";
  $("detail-body").replaceChildren(element("p", { className: "hint", textContent: breaches ? "Checking, breaches too…" : "Checking…" }));
  const answer = await send({ type: "vaultAudit", breaches });
  if ($("detail-title").textContent !== "Audit") return;  // the person went elsewhere meanwhile
  if (!answer?.ok) return $("detail-body").replaceChildren(element("p", { className: "error", textContent: failure(answer, "the audit failed") }));
  const summary = element("p", { className: "meta", textContent: `${answer.checked} logins checked, ${answer.findings.length} findings`
    + (answer.breachCheck ? ", breaches checked" : ", breaches not checked")
    + (answer.teamsLeftOut.length ? `; left out: ${answer.teamsLeftOut.join(", ")}` : "") });
  const check = answer.breachCheck ? null : element("button", { type: "button", id: "audit-breaches",
    textContent: "Check breaches too (sends 5 hex digits of each password's SHA-1 hash)", onclick: () => showAudit({ breaches: true }) });
  const groups = Object.keys(FINDING_NAMES).map((kind) => {
    const found = answer.findings.filter((f) => f.kind === kind);
    if (!found.length) return null;
    const heading = element("h3", { textContent: `${FINDING_NAMES[kind]} (${found.length})` });
    const list = element("ul", {}, ...found.map((finding) => {
      const open = element("button", { type: "button", textContent: (finding.vault ? `team ${finding.vault}: ` : "") + finding.title });
      open.setAttribute("aria-label", `Open ${finding.title}`);
      open.addEventListener("click", () => openAudited(finding));
      const change = /^https:\/\//.test(finding.changePasswordURL ?? "")
        ? element("a", { href: finding.changePasswordURL, target: "_blank", rel: "noopener noreferrer", textContent: "change password" }) : null;
      change?.setAttribute("aria-label", `Change the password of ${finding.title} on its site`);
      return element("li", {}, open, text(` ${finding.detail} `), change);
    }));
    return element("section", { className: "findings" }, heading, list);
  });
  $("detail-body").replaceChildren(summary, check, ...groups.filter(Boolean));
}

async function openAudited(finding) {
  const answer = await send({ type: "vaultItem", recordIdentifier: finding.recordIdentifier, vault: finding.vault ?? null });
  if (answer?.ok) showItem(answer.item); else say(failure(answer, "the item could not be opened"));
}

$("audit").addEventListener("click", () => { if (!state.locked) showAudit(); else say("Unlock first."); });

// ---- The lock: followed within half a second, whoever locked (the CLI, the idle timeout). ----

function showLock(locked) {
  $("lock-state").textContent = locked ? "Locked" : "Unlocked";
  $("unlock").hidden = !locked;
  $("lock").hidden = locked;
  $("new").disabled = locked;
  $("audit").disabled = locked;
}

async function followLock() {
  const status = await send({ type: "status" });
  const locked = status?.ok ? status.locked : true;
  const changed = status?.changeToken ?? null;
  if (locked === state.locked && changed !== state.changeToken && state.changeToken !== undefined) {
    state.changeToken = changed;
    return followChanges();
  }
  state.changeToken = changed;
  if (locked === state.locked) return;
  state.locked = locked;
  showLock(locked);
  if (locked) {
    // Every secret goes at once: the open item, the form, the code, the clipboard.
    forget();
    if (state.clipboardTimer) clearClipboard();
    say("The vault locked; its secrets are hidden.");
  } else {
    say("Unlocked.");
  }
  requery();
}

/** The vault changed elsewhere (the CLI, a sync, another window): the list is read again, and
 * the open item too — unless it is being edited, where a save tells of the change. */
async function followChanges() {
  const scroll = $("scroller").scrollTop, active = state.active;
  state.generation += 1;
  state.pages.clear();
  await fetchPage(0, state.generation);
  $("scroller").scrollTop = scroll;
  state.active = Math.min(active, state.total - 1);
  render();
  const item = state.item;
  if (!item || state.editing) return;
  const answer = await send({ type: "vaultItem", recordIdentifier: item.recordIdentifier, vault: item.vault ?? null });
  if (state.item !== item || state.editing) return;
  if (answer?.ok) {
    if (answer.item.revision !== item.revision) { showItem(answer.item); say("This item was changed elsewhere; it shows the change."); }
  } else if (answer?.error?.code === "notFound") {
    forget();
    say("The item you had open was deleted elsewhere.");
  }
}

$("unlock").addEventListener("click", async () => {
  say("Waiting for your master password…");
  const answer = await send({ type: "unlock" });
  say(answer?.ok ? "Unlocked." : failure(answer, "not unlocked"));
  followLock();
});
$("lock").addEventListener("click", async () => { await send({ type: "lock" }); followLock(); });

async function start() {
  // The list is asked for at once, beside the form's tables and the lock state: its first rows
  // are what a person waits for.
  const listed = requery();
  const [form, status] = await Promise.all([send({ type: "vaultForm" }), send({ type: "status" })]);
  if (!form?.ok) return say(failure(form, "the Coffer host is not available"));
  state.form = form;
  for (const kind of form.kinds) $("kind").append(element("option", { value: kind, textContent: KIND_NAMES[kind] ?? kind }));
  state.locked = status?.ok ? status.locked : true;
  state.changeToken = status?.changeToken ?? null;
  showLock(state.locked);
  await listed;
  setInterval(followLock, 500);
}

start();
