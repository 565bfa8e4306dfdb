// The vault page's list (SPEC.md §13.7): a listbox drawn by window, a page of 100 rows fetched
// at a time, searched as you type. Shares vault.js's scope.
"use strict";

// ---- The query and the list (rendered by window: only the rows in view exist). ----

/** The pause after a keystroke before the list is asked again (null: none pending). */
let searchTimer = null;

function query() {
  const vault = $("vault").value;
  const request = { query: $("query").value.trim(), kind: $("kind").value, sort: $("sort").value };
  if (vault !== "*") request.vault = vault;
  if ($("tag").value) request.tag = $("tag").value;
  return request;
}

/** The answer vault-first-page.js asked for, when `request` is that one and the list's first; else null. */
function takeFirstPage(request) {
  const early = firstPage;
  firstPage = null;
  return early && early.key === JSON.stringify(request) ? early.answer : null;
}

async function fetchPage(offset, generation) {
  if (state.pages.has(offset)) return;
  state.pages.set(offset, null);  // asked for
  const request = { type: "vaultItems", ...query(), offset, limit: PAGE };
  const answer = await (takeFirstPage(request) ?? send(request));
  if (generation !== state.generation) return;
  if (!answer?.ok) { state.pages.delete(offset); return say(failure(answer, "the list could not be read")); }
  state.pages.set(offset, answer.items);
  if (offset === 0 && answer.changeToken !== undefined) state.listedToken = answer.changeToken;
  state.total = answer.total;
  updateTeams(answer.teams ?? []);
  if (answer.tags) updateTags(answer.tags);
  $("count").textContent = answer.namesLocked ? "" : `(${answer.total})`;
  $("list").setAttribute("aria-busy", String(searchTimer !== null));  // still busy while a newer search waits its turn
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
    if (!node || node.dataset.key !== rowKey(row)) {
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

/** What a drawn row shows and stands for: a kept node is redrawn when any of it changed (an item
 * renamed elsewhere must not keep its old title). */
function rowKey(row) {
  return [row.vault ?? "", row.recordIdentifier, row.kind, row.title, row.user, row.site, ...(row.tags ?? []), row.modified ?? ""].join("\u0000");
}

/** A row's date as the list shows it when sorted by it: the day, in the person's locale. */
function day(seconds) {
  return seconds ? new Date(seconds * 1000).toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" }) : "";
}

function option(row, index) {
  const title = element("span", { className: "title", textContent: row.title || "(no name)" });
  const where = [KIND_NAMES[row.kind] ?? row.kind, row.user, row.site !== row.title ? row.site : "", row.vault ? `team ${row.vault}` : "",
    (row.tags ?? []).map((tag) => `#${tag}`).join(" "), $("sort").value === "modified" ? `changed ${day(row.modified)}` : ""].filter(Boolean);
  const made = element("div", { id: `row-${index}`, className: "option" }, title, element("span", { className: "sub", textContent: where.join(" · ") }));
  made.dataset.key = rowKey(row);
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

$("query").addEventListener("input", () => {
  // The rows shown are the last search's until this one's come: told at once, not after the pause.
  $("list").setAttribute("aria-busy", "true");
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => { searchTimer = null; requery(); }, 60);
});
for (const id of ["kind", "tag", "vault", "sort"]) $(id).addEventListener("change", requery);

/** The tag filter offers every tag of the vaults listed (the host names them with the first
 * page); the one chosen stays, even when no item carries it any more. */
function updateTags(tags) {
  const select = $("tag"), chosen = select.value;
  const wanted = [...new Set([...tags, ...(chosen ? [chosen] : [])])];
  const options = [...select.options].slice(1).map((o) => o.value);
  if (options.join("\u0000") === wanted.join("\u0000")) return;
  select.replaceChildren(select.options[0], ...wanted.map((tag) => element("option", { value: tag, textContent: tag })));
  select.value = chosen;
}

function updateTeams(teams) {
  const select = $("vault");
  const known = new Set([...select.options].map((o) => o.value));
  for (const team of teams) if (!known.has(team)) select.append(element("option", { value: team, textContent: `Team ${team}` }));
}
