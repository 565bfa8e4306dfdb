// The chooser of text insertion (SPEC.md §13.5.4): opened by "Insert from Coffer…" on an
// editable field. Find an item by name (while locked too), choose one of its values by name
// (pinentry when locked); the service worker sends the text to the field the person
// right-clicked. This page never sees a value.
"use strict";

const api = globalThis.browser ?? globalThis.chrome;
const token = location.hash.slice(1);
const send = (message) => api.runtime.sendMessage(message).catch((error) => ({ ok: false, error: { code: "failed", message: String(error) } }));
const $ = (id) => document.getElementById(id);

function say(text) { $("message").textContent = text; }

function button(label, detail, action) {
  const item = document.createElement("li");
  const choice = document.createElement("button");
  choice.className = "choice";
  choice.textContent = label;
  if (detail) {
    const small = document.createElement("span");
    small.className = "detail";
    small.textContent = ` ${detail}`;
    choice.append(small);
  }
  choice.addEventListener("click", (event) => { if (event.isTrusted) action(); });
  item.append(choice);
  return item;
}

async function search() {
  const answer = await send({ type: "textItems", query: $("query").value });
  if (!answer?.ok) return say(answer?.error?.message ?? "Coffer did not answer");
  $("items").replaceChildren(...answer.items.map((item) =>
    button(item.name || "(no name)", item.user ? `${item.kind} · ${item.user}` : item.kind, () => showMembers(item))));
  say(answer.items.length ? (answer.locked ? "Locked: choosing a value asks for the master password." : "") : "No item matches.");
}

async function showMembers(item) {
  say("");
  const answer = await send({ type: "textMembers", recordIdentifier: item.recordIdentifier });
  if (!answer?.ok) return say(answer?.error?.code === "cancelled" ? "Cancelled." : answer?.error?.message ?? "Coffer did not answer");
  $("item-name").textContent = item.name;
  $("members").replaceChildren(...answer.members.map((member) =>
    button(member.label, member.secret ? "(secret)" : "", () => insert(item, member))));
  $("items-step").hidden = true;
  $("members-step").hidden = false;
  $("members").querySelector("button")?.focus();
}

async function insert(item, member) {
  const answer = await send({ type: "insertText", token, recordIdentifier: item.recordIdentifier, member: member.member });
  if (!answer?.ok) return say(answer?.error?.message ?? "Coffer did not answer");
  window.close();
}

$("query").addEventListener("input", search);
$("back").addEventListener("click", () => { $("members-step").hidden = true; $("items-step").hidden = false; $("query").focus(); });
addEventListener("keydown", (event) => { if (event.key === "Escape") window.close(); });
search();
