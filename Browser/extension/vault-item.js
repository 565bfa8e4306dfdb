// The vault page's item view: every member, secrets masked until revealed, Copy with the
// clipboard cleared after the CLI's delay, the one-time code with its countdown.
"use strict";

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
    const save = element("button", { type: "button", textContent: "Save to Downloads" });
    save.setAttribute("aria-label", `Save ${attachment.name} to Downloads`);
    save.addEventListener("click", async () => {
      const answer = await send({ type: "attachmentSave", recordIdentifier: item.recordIdentifier, name: attachment.name, vault: item.vault ?? null });
      say(answer?.ok ? `Saved as ${answer.path}` : failure(answer, "not saved"));
    });
    add("Attachment", text(`${attachment.name} (${attachment.mediaType}, ${attachment.size} bytes)`), save);
  }
  add("Add a file", addFileInput(item));
  item.passwordHistory.forEach((old, n) => add(n === 0 ? "Earlier passwords" : "", ...secret(`earlier password ${n + 1}`, old.password), text(`until ${old.replaced.slice(0, 10)}`)));
  const findings = item.findings.length ? element("ul", {}, ...item.findings.map((f) => element("li", { className: "finding", textContent: `${f.kind}: ${f.detail}` }))) : null;
  findings?.setAttribute("aria-label", "Audit findings");
  const change = item.findings.length && /^https:\/\//.test(item.changePasswordURL ?? "")
    ? element("a", { href: item.changePasswordURL, target: "_blank", rel: "noopener noreferrer", textContent: "Change this password on the site" }) : null;
  const actions = element("div", { className: "actions" },
    element("button", { type: "button", id: "edit", textContent: "Edit", onclick: () => edit(item) }),
    element("button", { type: "button", id: "delete", textContent: "Delete", onclick: () => remove(item) }));
  // (`replaceChildren` writes a null as the text "null": only what exists is passed.)
  $("detail-body").replaceChildren(...[element("p", { className: "meta", textContent: meta }), findings, change, members, actions].filter(Boolean));
  render();
}


/** A file chosen in the browser's file dialog, added to the item by the host (sealed there). One
 * message carries up to 512 KiB of it: a larger file goes in parts, then the add names the upload
 * they made (SPEC.md §13.3), up to 100 MiB as `coffer attach` takes. */
function addFileInput(item) {
  const input = element("input", { type: "file", id: "add-attachment" });
  input.setAttribute("aria-label", "Add a file to this item (up to 100 MiB)");
  input.addEventListener("change", async () => {
    const file = input.files?.[0];
    if (!file) return;
    if (file.size > 100 * 1024 * 1024) return say(`${file.name} is over 100 MiB: add it with coffer attach.`);
    const request = { type: "attachmentAdd", recordIdentifier: item.recordIdentifier, vault: item.vault ?? null, name: file.name, mediaType: file.type };
    if (file.size <= PART) {
      request.content = await base64Of(file);
    } else {
      for (let at = 0; at < file.size; at += PART) {
        say(`Adding ${file.name}: ${Math.floor((at / file.size) * 100)}%`);
        const part = await send({ type: "attachmentPart", ...(request.upload ? { upload: request.upload } : {}),
                                  content: await base64Of(file.slice(at, at + PART)) });
        if (!part?.ok) return say(failure(part, "the file was not added"));
        request.upload = part.upload;
      }
    }
    const answer = await send(request);
    if (!answer?.ok) return say(failure(answer, "the file was not added"));
    say(`Added ${answer.name}.`);
    open({ recordIdentifier: item.recordIdentifier, vault: item.vault });
  });
  return input;
}

/** What one message carries of a file: 512 KiB, base64 in the message. */
const PART = 512 * 1024;

async function base64Of(blob) {
  const bytes = new Uint8Array(await blob.arrayBuffer());
  let binary = "";
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return btoa(binary);
}

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

/** Copies, then has the service worker clear the clipboard after the CLI's delay
 * ($COFFER_CLIP_TIME, default 45 s), as `coffer show --clip` does — even if this page is closed
 * first; a lock clears it at once. */
async function copy(label, value) {
  try {
    await navigator.clipboard.writeText(value);
  } catch {
    return say("The browser refused the clipboard.");
  }
  state.copied = true;
  const answer = await send({ type: "clipboardCopied" });
  say(`Copied ${label}; the clipboard is cleared in ${answer?.seconds ?? 45} seconds.`);
}

function clearClipboard() {
  state.copied = false;
  navigator.clipboard.writeText("").catch(() => send({ type: "clipboardClear" }));
}

/** The code as `coffer otp` prints it at this moment: fetched again when its period rolls over,
 * the seconds left counted on the same clock the code is made from. */
function oneTimeCode(item) {
  const code = element("span", { className: "value", id: "otp-code", textContent: "······" });
  const left = element("span", { id: "otp-left" });
  left.setAttribute("aria-live", "off");
  let slot = null, period = 30;  // the period's number since the epoch the shown code is of
  async function refresh() {
    const answer = await send({ type: "vaultCode", recordIdentifier: item.recordIdentifier, vault: item.vault ?? null });
    if (state.item !== item) return;
    if (!answer?.ok) { code.textContent = "—"; return say(failure(answer, "no code")); }
    code.textContent = answer.code;
    period = answer.period ?? 0;
    slot = period ? Math.floor(Date.now() / 1000 / period) : null;
    tick();
  }
  function tick() {
    if (!period) { left.textContent = ""; return; }
    const now = Date.now() / 1000;
    if (Math.floor(now / period) !== slot) { slot = Math.floor(now / period); refresh(); return; }
    left.textContent = `${period - Math.floor(now % period)} s left`;
  }
  refresh();
  state.codeTimer = setInterval(tick, 250);
  return [code, left, copyButton("one-time code", () => code.textContent)];
}
