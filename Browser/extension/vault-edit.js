// The vault page's form: create and edit read by the host with the library's rules, the
// conflict shown and chosen, delete confirmed in the page.
"use strict";

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
