// Coffer's content script: runs in every frame of http(s) pages. It shows the suggestions for
// a focused login field in a closed shadow root in the top layer (the page can neither read,
// restyle nor cover them),
// fills only after a trusted click or key on that list (or the keyboard command), and offers to
// save a login after a form is submitted. It never asks the service worker about another
// origin: the worker answers for this frame's origin as the browser reports it.
"use strict";

(() => {
  const api = globalThis.browser ?? globalThis.chrome;
  if (globalThis.__cofferLoaded) return;
  globalThis.__cofferLoaded = true;

  const send = (message) => api.runtime.sendMessage(message).catch((error) => ({ ok: false, error: { code: "failed", message: String(error) } }));

  // ---- Fields: which are login fields and which belong together is fields.js's (SPEC.md §13.6) ----

  const { loginGroup, firstLoginGroup, submittedLogin, isVisible, deepActiveElement, eventTarget } = globalThis.cofferFields;

  /** Until when the focus moves of a fill must not open the list again. */
  let fillingUntil = 0;

  const VALUE_SETTERS = [HTMLInputElement, HTMLSelectElement, HTMLTextAreaElement]
    .map((type) => [type, Object.getOwnPropertyDescriptor(type.prototype, "value").set]);

  function setValue(input, value) {
    fillingUntil = performance.now() + 400;
    input.focus({ preventScroll: true });
    const setter = VALUE_SETTERS.find(([type]) => input instanceof type)[1];
    setter.call(input, value);  // past a page's own setter, as a person typing would be
    // Composed, so a web component's listeners on its host hear them too (Lit, Material).
    input.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
    input.dispatchEvent(new Event("change", { bubbles: true, composed: true }));
  }

  /** A chosen login goes into its group's user-name and current-password fields and nowhere
   * else: never a new-password field, a card, search or one-time-code field. */
  function fillFields(group, credential) {
    if (group.user && credential.user && isVisible(group.user)) setValue(group.user, credential.user);
    if (group.password && isVisible(group.password)) setValue(group.password, credential.password);
  }

  // ---- The inline list: a closed shadow root in the top layer ----
  //
  // A choice on this list releases a password, so it must be a choice a person could see
  // (SPEC.md §13.5). The page shares the DOM with the list's host element, so: the host is a
  // popover in the top layer (nothing the page stacks can cover it); its look is fixed by
  // `:host { … !important }` inside the closed shadow root, which outranks every rule and
  // inline style the page can write; and at the moment of a click the list must have been on
  // screen, unchanged and unobscured, for a moment: the click is refused (and the list
  // closed) when the page restyled it, opened anything else in the top layer, or — where the
  // browser can tell (IntersectionObserver v2) — covered it or made it transparent.

  /** How long the list must have been visible before a click on it counts (the browsers' own
   * autofill popups wait 500 ms): a page cannot flash it under a click it provoked. */
  const SETTLE_MS = 400;
  const HOST_STYLE = ["display: block", "position: fixed", "margin: 0", "padding: 0", "border: 0", "right: auto", "bottom: auto",
    "width: auto", "height: auto", "max-width: none", "max-height: none", "overflow: visible", "background: transparent",
    "opacity: 1", "visibility: visible", "filter: none", "backdrop-filter: none", "transform: none", "translate: none",
    "scale: none", "rotate: none", "clip-path: none", "mask: none", "mix-blend-mode: normal", "pointer-events: auto",
    "zoom: 1", "content-visibility: visible", "contain: none", "color-scheme: light", "z-index: 2147483647",
  ].map((rule) => rule + " !important").join("; ");

  let list = null;  // { host, root, items, index, group, anchor, shownAt, observers, visible }

  function closeList() {
    if (!list) return;
    for (const observer of list.observers) observer.disconnect();
    try { list.host.hidePopover?.(); } catch { /* already hidden */ }
    list.host.remove();
    list = null;
  }

  /** Where the list goes: below the field, unless it would cover another field or button a
   * person may click next (a sign-up form's password under its user name); then to the right,
   * then above. */
  function placement(anchor, width, height) {
    const rect = anchor.getBoundingClientRect();
    const others = [...document.querySelectorAll("input, button, select, textarea, a[href]")]
      .filter((element) => element !== anchor && element.getClientRects().length > 0)
      .map((element) => element.getBoundingClientRect());
    const covers = (left, top) => others.some((r) => r.left < left + width && r.right > left && r.top < top + height && r.bottom > top);
    const candidates = [[rect.left, rect.bottom + 2], [rect.right + 8, rect.top], [rect.left, rect.top - height - 2]]
      .filter(([left, top]) => left >= 0 && top >= 0 && left + width <= innerWidth && top + height <= innerHeight);
    return candidates.find(([left, top]) => !covers(left, top)) ?? [rect.left, rect.bottom + 2];
  }

  /** A page waiting for a passkey (`mediation: "conditional"`) offers its relying party's
   * passkeys under a field whose autocomplete has `webauthn` (SPEC.md §13.5.1); else none. */
  function conditionalPasskeys(field) {
    return /\bwebauthn\b/i.test(field.getAttribute("autocomplete") ?? "") ? globalThis.__cofferPasskeys?.conditionalPasskeys() ?? [] : [];
  }

  /** The list under a login field: a generated password for a field that asks for a new one,
   * else the saved logins (after the page's passkeys, under a conditional-mediation field). */
  function loginEntries(identities, group, passkeys) {
    const entries = group.offer === "generated" ? [{ generated: true, action: () => fillGenerated(group) }]
      : identities.map((identity) => ({ identity, action: () => fillChosen(identity.recordIdentifier, group) }));
    entries.unshift(...passkeys.map((passkey) => ({ passkey, action: () => globalThis.__cofferPasskeys.chooseConditional(passkey.recordIdentifier) })));
    return entries;
  }

  /** A `<span>` of class `name` holding `text` (as text, never markup). */
  function span(name, text) {
    const element = document.createElement("span");
    element.className = name;
    element.textContent = text;
    return element;
  }

  /** Shows `entries` under `anchor`, `head` above them. */
  function render(anchor, entries, head, group = null) {
    closeList();
    if (entries.length === 0) return;
    const host = document.createElement("coffer-suggestions");
    host.setAttribute("popover", "manual");
    const root = host.attachShadow({ mode: "closed" });
    const rect = anchor.getBoundingClientRect();
    const width = Math.max(220, rect.width);
    root.innerHTML = `<style>
      :host { ${HOST_STYLE} }
      .list { font: 13px system-ui, sans-serif; background: #fff; color: #111; border: 1px solid #bbb; border-radius: 6px;
              box-shadow: 0 4px 14px rgba(0,0,0,.2); min-width: ${width}px; max-width: ${width + 200}px; padding: 4px 0; opacity: 1; }
      .item { display: flex; flex-wrap: wrap; column-gap: 8px; align-items: baseline; padding: 6px 10px; cursor: pointer; }
      .item.active, .item:hover { background: #e8f0fe; }
      .user { font-weight: 600; } .site { color: #555; font-size: 12px; } .note { color: #9a6700; font-size: 11px; }
      .head { color: #666; font-size: 11px; padding: 2px 10px 4px; }
    </style><style id="place"></style><div class="list" role="listbox" aria-label="Coffer logins"></div>`;
    const box = root.querySelector(".list");
    const heading = document.createElement("div");
    heading.className = "head";
    heading.textContent = head;
    box.append(heading);
    const items = [];
    for (const entry of entries) {
      const item = document.createElement("div");
      item.className = "item";
      item.setAttribute("role", "option");
      if (entry.generated) {
        item.textContent = "Use a strong generated password";
      } else if (entry.passkey) {
        item.append(span("user", entry.passkey.userName || "(no user name)"), span("site", `passkey for ${entry.passkey.rpId}`));
      } else if (entry.item) {
        const what = entry.kind === "card" ? "card" : entry.item.user ? `address · ${entry.item.user}` : "address";
        item.append(span("user", entry.item.name || "(no name)"), span("site", what));
      } else {
        const { identity } = entry;
        // A team's login names its team (SPEC.md §16.6).
        const site = identity.vault ? `${identity.vault}: ${identity.serviceIdentifier}` : identity.serviceIdentifier;
        item.append(span("user", identity.user || "(no user name)"), span("site", site));
        const noteText = identity.match === "registrable-domain" ? "another host of this site"
          : identity.match === "shared-credential" ? `saved for ${identity.savedFor}, which shares its logins with this site` : null;
        if (noteText) {
          item.append(span("note", noteText));
        }
      }
      items.push({ element: item, action: entry.action });
      box.append(item);
    }
    // A press anywhere on the list keeps the focus in the field; on an item it is a choice
    // (checked), elsewhere it just closes the list. (Listened for inside the closed root,
    // where the event's path shows which item it hit.)
    root.addEventListener("mousedown", (event) => {
      event.preventDefault();
      event.stopPropagation();
      if (!event.isTrusted) return;  // a page's synthetic click chooses nothing
      const index = items.findIndex((entry) => entry.element.contains(event.composedPath()[0]));
      if (index < 0) { closeList(); return; }
      if (!seenByAPerson(index, event)) { closeList(); return; }
      choose(index);
    });
    document.documentElement.append(host);
    const place = ([left, top]) => {
      root.getElementById("place").textContent = `:host { left: ${Math.round(left)}px !important; top: ${Math.round(top)}px !important; }`;
    };
    place([rect.left, rect.bottom + 2]);
    try { host.showPopover(); } catch { host.remove(); return; }  // no top layer: no list
    const size = box.getBoundingClientRect();  // measured before the first paint, then placed
    place(placement(anchor, size.width, size.height));
    list = { host, root, items, index: -1, group, anchor, shownAt: performance.now(), observers: [], visible: new Map() };
    watch(list);
  }

  /** Watches what could make the list a trap: the page touching the host, restyling the page
   * or opening something else in the top layer closes it; IntersectionObserver v2 (Chromium)
   * reports whether each item is really visible — unoccluded, opaque, untransformed. */
  function watch(current) {
    // Only what can change how the top layer looks: the host itself, the root and body (whose
    // inherited properties reach it), new style sheets, and anything else entering the top
    // layer. A page's own animations elsewhere cannot cover the top layer and are left alone.
    const mutations = new MutationObserver((records) => {
      const touched = records.some((record) => record.type === "attributes"
        ? [current.host, document.documentElement, document.body].includes(record.target) || ["popover", "open"].includes(record.attributeName)
        : [...record.addedNodes].some((node) => node.nodeName === "STYLE" || node.nodeName === "LINK")
          || [...record.removedNodes].includes(current.host));
      if (touched && list === current) closeList();
    });
    mutations.observe(document.documentElement, { attributes: true, attributeFilter: ["style", "class", "popover", "open", "hidden"], childList: true, subtree: true });
    current.observers.push(mutations);
    if ("isVisible" in IntersectionObserverEntry.prototype) {
      const visibility = new IntersectionObserver((records) => {
        for (const record of records) {
          const since = current.visible.get(record.target);
          if (!record.isVisible) current.visible.set(record.target, null);
          else if (!since) current.visible.set(record.target, performance.now());
        }
      }, { trackVisibility: true, delay: 100, threshold: [1.0] });
      for (const entry of current.items) { current.visible.set(entry.element, null); visibility.observe(entry.element); }
      current.observers.push(visibility);
    }
  }

  /** Whether the item a trusted press landed on is one a person could have seen: the list
   * unchanged and on screen long enough, nothing else in the top layer, the host's computed
   * look intact, the press inside the item, and — where measured — the item fully visible for
   * the settle time. */
  function seenByAPerson(index, event) {
    const now = performance.now();
    if (!list || now - list.shownAt < SETTLE_MS) return false;
    const element = list.items[index].element;
    const box = element.getBoundingClientRect();
    if (event.clientX < box.left || event.clientX > box.right || event.clientY < box.top || event.clientY > box.bottom) return false;
    if (!list.host.matches(":popover-open")) return false;
    const others = [...document.querySelectorAll(":popover-open, dialog:modal")].filter((other) => other !== list.host);
    if (others.length > 0 || document.fullscreenElement) return false;
    for (let node = list.host; node; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (Number(style.opacity) < 1 || style.visibility !== "visible" || (node === list.host && (style.filter !== "none" || style.transform !== "none"))) return false;
    }
    if (list.visible.size > 0) {
      const since = list.visible.get(element);
      if (!since || now - since < SETTLE_MS) return false;
    }
    return true;
  }

  function highlight(index) {
    if (!list) return;
    list.index = (index + list.items.length) % list.items.length;
    list.items.forEach((entry, position) => entry.element.classList.toggle("active", position === list.index));
  }

  function choose(index) {
    const entry = list?.items[index];
    closeList();
    entry?.action();
  }

  async function fillChosen(recordIdentifier, group) {
    // A password field no person can reach (off the page, hidden, covered) gets nothing, and
    // nothing is asked of the host for it: such a field is a page's trap, not a login form.
    if (group.password && !isVisible(group.password)) return;
    if (!group.password && !(group.user && isVisible(group.user))) return;
    const started = performance.now();
    const answer = await send({ type: "fill", trigger: "choice", recordIdentifier });
    if (answer?.ok) {
      fillFields(group, answer);
      document.documentElement.dataset.cofferFillMs = String(Math.round((performance.now() - started) * 10) / 10);
    }
  }

  /** A generated password into the new-password field and its confirmations. */
  async function fillGenerated(group) {
    const ruled = group.newPasswords.find((field) => field.hasAttribute("passwordrules"));
    const answer = await send({ type: "generate", rules: ruled ? ruled.getAttribute("passwordrules") : undefined });
    if (!answer?.ok) return;
    for (const field of group.newPasswords) if (isVisible(field)) setValue(field, answer.password);
  }

  async function suggestFor(field) {
    const group = loginGroup(field);
    const passkeys = conditionalPasskeys(field);
    if (!group.offer && passkeys.length === 0) return offerItems(field);  // a card or address field, else nothing
    const answer = group.offer === "logins" ? await send({ type: "suggest" }) : { ok: true, identities: [] };
    if (!answer?.ok || deepActiveElement() !== field) return;
    const head = answer.locked && group.offer === "logins" ? "Coffer 🔒 — choose a login, then unlock" : "Coffer";
    render(field, loginEntries(answer.identities ?? [], group, passkeys), head, group);
  }

  // ---- Cards and addresses (SPEC.md §13.6.1): checkout-fields.js says which fields ----

  const SECURE_PAGE = location.protocol === "https:" || (location.protocol === "http:" && location.hostname === "localhost");
  /** The number of the card Coffer filled here: submitting it offers no save (it is kept). */
  let filledCardNumber = null;

  /** A payment or address field offers the cards or the identities, by name; only on an https
   * page. */
  async function offerItems(field) {
    const kind = SECURE_PAGE ? cofferCheckout.offerFor(field) : null;
    if (!kind) return;
    const answer = await send({ type: "items", kind });
    if (!answer?.ok || deepActiveElement() !== field) return;
    const entries = (answer.items ?? []).map((item) => ({ item, kind, action: () => fillItem(item.recordIdentifier, kind, field) }));
    const what = kind === "card" ? "a card" : "an address";
    render(field, entries, answer.locked ? `Coffer 🔒 — choose ${what}, then unlock` : "Coffer");
  }

  /** The chosen card or identity into the chosen field's section, and nowhere else: never a
   * field of another section, a hidden one, or another frame's. */
  async function fillItem(recordIdentifier, kind, field) {
    if (!isVisible(field)) return;
    const started = performance.now();
    const answer = await send({ type: "fillItem", kind, recordIdentifier });
    if (!answer?.ok) return;
    cofferCheckout.fill(cofferCheckout.sectionOf(field), answer, setValue);
    if (answer.card?.number) filledCardNumber = answer.card.number;
    document.documentElement.dataset.cofferFillMs = String(Math.round((performance.now() - started) * 10) / 10);
  }

  function offerFor(event) {
    if (!event.isTrusted || performance.now() < fillingUntil) return;
    const field = eventTarget(event);
    if (!(field instanceof HTMLInputElement)) return;
    if (list?.anchor === field && list.host.isConnected) return;
    if (isVisible(field)) suggestFor(field);
  }

  // Focusing a login field, or clicking one that already has the focus, shows the list. Both
  // events are composed: a field inside a shadow root is found through the event's path.
  document.addEventListener("focusin", offerFor, true);
  document.addEventListener("mousedown", (event) => { if (eventTarget(event) === deepActiveElement()) offerFor(event); }, true);

  document.addEventListener("focusout", (event) => {
    if (event.isTrusted && list && eventTarget(event) === list.anchor) setTimeout(() => { if (deepActiveElement() !== list?.anchor) closeList(); }, 150);
  }, true);

  // Keyboard: ArrowDown from the field moves into the list, Enter fills, Escape closes, as the
  // browser's own autofill list does.
  document.addEventListener("keydown", (event) => {
    if (!event.isTrusted || !list || eventTarget(event) !== list.anchor) return;
    if (event.key === "ArrowDown") { highlight(list.index + 1); event.preventDefault(); }
    else if (event.key === "ArrowUp") { highlight(list.index - 1); event.preventDefault(); }
    else if (event.key === "Enter" && list.index >= 0) { event.preventDefault(); event.stopPropagation(); choose(list.index); }
    else if (event.key === "Escape") { closeList(); event.preventDefault(); }
  }, true);

  addEventListener("scroll", () => closeList(), { passive: true });
  addEventListener("resize", () => closeList(), { passive: true });
  // Something else entering the top layer could sit above the list: close it.
  document.addEventListener("toggle", (event) => { if (list && event.target !== list.host && event.newState === "open") closeList(); }, true);
  // Typing means the person is not choosing from the list: it closes, as the browsers' own do.
  document.addEventListener("input", (event) => { if (event.isTrusted && list && eventTarget(event) === list.anchor) closeList(); }, true);
  // A press outside the list closes it and goes on to whatever it was meant for.
  document.addEventListener("mousedown", (event) => {
    if (list && event.target !== list.host && eventTarget(event) !== list.anchor) closeList();
  }, true);

  // ---- The keyboard command and the popup ----

  api.runtime.onMessage.addListener((message, sender, respond) => {
    if (sender.id !== api.runtime.id) return false;
    if (message.type === "commandFill") {
      if (!document.hasFocus()) return false;
      const field = deepActiveElement();
      const focused = field instanceof HTMLInputElement ? loginGroup(field) : null;
      const group = focused?.offer === "logins" && focused.password ? focused : firstLoginGroup();
      if (!group?.password) return false;
      send({ type: "fill", trigger: "command" }).then((answer) => {
        if (answer?.ok) fillFields(group, answer);
        respond(answer);
      });
      return true;
    }
    if (message.type === "fillChosen" && window === window.top) {
      const group = firstLoginGroup();
      if (!group) { respond({ ok: false, error: { code: "notFound", message: "no login form here" } }); return false; }
      fillChosen(message.recordIdentifier, group).then(() => respond({ ok: true }));
      return true;
    }
    if (message.type === "insertText" && typeof message.text === "string") {
      insertAtCaret(message.text);
      return false;
    }
    if (message.type === "fillCardFrame" && message.origin === location.origin && window !== window.top) {
      // Another frame of this processor's origin was chosen: this frame's visible card fields.
      const field = cofferCheckout.firstCardField();
      if (field) cofferCheckout.fill(cofferCheckout.sectionOf(field), message.item, setValue);
      filledCardNumber = message.item.card?.number ?? filledCardNumber;
      return false;
    }
    if (message.type === "showCardSaveBar" && window === window.top) {
      showCardSaveBar(message);
      return false;
    }
    if (message.type === "showSaveBar" && window === window.top) {
      showSaveBar(message);
      return false;
    }
    return false;
  });

  // ---- Insert any text (the context menu's chooser, SPEC.md §13.5.4) ----

  /** The chosen text at the caret of the focused field (replacing its selection), as typing
   * would put it there; a field that takes no caret (type=email) gets it at its end. */
  function insertAtCaret(text) {
    const field = deepActiveElement();
    if ((field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement) && !field.readOnly && !field.disabled) {
      let start = null;
      try { start = field.selectionStart; } catch { start = null; }
      if (start === null) {
        setValue(field, field.value + text);
        return;
      }
      field.setRangeText(text, start, field.selectionEnd ?? start, "end");
      field.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
      field.dispatchEvent(new Event("change", { bubbles: true, composed: true }));
    } else if (field?.isContentEditable) {
      document.execCommand("insertText", false, text);
    }
  }

  // ---- Saving after a submitted login ----

  function submitted(form) {
    const login = submittedLogin(form);
    if (login) send({ type: "submitted", ...login });
    // A card typed into a checkout (never one Coffer filled: that one is kept already).
    const card = SECURE_PAGE ? cofferCheckout.submittedCard(form) : null;
    if (card && card.number !== filledCardNumber) send({ type: "cardSubmitted", card });
  }

  document.addEventListener("submit", (event) => submitted(event.target), true);

  /** A bar at the top right of the page in a closed shadow root (the page cannot read or press
   * it): `text`, then `body` (its controls); a trusted click on one of its buttons removes it and
   * calls `choose` with the button's action and the bar's root. */
  function showBar(tag, text, body, choose) {
    document.querySelector(tag)?.remove();
    const bar = document.createElement(tag);
    const root = bar.attachShadow({ mode: "closed" });
    bar.style.cssText = "all: initial; position: fixed; z-index: 2147483647; top: 12px; right: 12px;";
    root.innerHTML = `<style>
      .bar { font: 13px system-ui, sans-serif; background: #fff; color: #111; border: 1px solid #bbb; border-radius: 8px;
             box-shadow: 0 4px 14px rgba(0,0,0,.25); padding: 12px 14px; max-width: 340px; }
      .text, label { display: block; margin-bottom: 10px; } button { font: inherit; margin-right: 6px; padding: 4px 10px; border-radius: 5px;
             border: 1px solid #999; background: #f6f6f6; cursor: pointer; } button.primary { background: #1a73e8; color: #fff; border-color: #1a73e8; }
    </style><div class="bar" role="dialog" aria-label="Coffer"><div class="text"></div>${body}</div>`;
    root.querySelector(".text").textContent = text;
    for (const button of root.querySelectorAll("button")) {
      button.addEventListener("click", (event) => {
        if (!event.isTrusted) return;
        bar.remove();
        choose(button.dataset.action, root);
      });
    }
    document.documentElement.append(bar);
    return root;
  }

  function showSaveBar({ user, host, state }) {
    const root = showBar("coffer-save-bar", state === "new"
      ? `Save the login for ${user || "this account"} on ${host} in Coffer?`
      : `Update the password of ${user || "this account"} on ${host} in Coffer?`,
    `<button class="primary" data-action="save"></button><button class="never" data-action="never">Never for this site</button><button class="close" data-action="close">Not now</button>`,
    (action) => { if (action !== "close") send({ type: "saveAction", action }); });
    root.querySelector("[data-action=save]").textContent = state === "new" ? "Save" : "Update";
  }

  /** "Save this card?", with the security code kept only when the person ticks it. */
  function showCardSaveBar({ brand, lastDigits, hasCode }) {
    const root = showBar("coffer-card-save-bar", `Save the card ${brand ? brand + " " : ""}•••• ${lastDigits} in Coffer?`,
      `<label class="code"><input type="checkbox" class="with-code"> Also keep its security code</label>
      <button class="primary" data-action="save">Save</button><button class="close" data-action="close">Not now</button>`,
      (action, bar) => send({ type: "cardSaveAction", action, withCode: bar.querySelector(".with-code")?.checked === true }));
    if (!hasCode) root.querySelector(".code").remove();
  }

  // ---- On load: a save bar carried over from the page that was submitted; fill on load. ----

  async function onLoad() {
    if (window === window.top) {
      const answer = await send({ type: "pendingSave" });
      if (answer?.pending) showSaveBar(answer.pending);
      if (answer?.card) showCardSaveBar(answer.card);
    }
    const group = firstLoginGroup();
    if (group?.password && window === window.top) {
      const answer = await send({ type: "fill", trigger: "pageLoad" });
      if (answer?.ok) fillFields(group, answer);
    }
  }

  onLoad();
})();
