// The vault page's lock state and changes made elsewhere, followed every 500 ms; then the
// page's start.
"use strict";

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
    if (state.copied) clearClipboard();
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
  // The list may be older than that `status`: its first page can be asked for at the click
  // (SPEC.md §13.7). Compared from the token it was read at, a change in between is followed.
  if (state.listedToken !== undefined) state.changeToken = state.listedToken;
  setInterval(followLock, 500);
}

start();
