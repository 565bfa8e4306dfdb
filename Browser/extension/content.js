// Coffer's content script: runs in every frame of http(s) pages. It shows the suggestions for
// a focused login field in a closed shadow root (the page can neither read nor restyle them),
// fills only after a trusted click or key on that list (or the keyboard command), and offers to
// save a login after a form is submitted. It never asks the service worker about another
// origin: the worker answers for this frame's origin as the browser reports it.
"use strict";

(() => {
  const api = globalThis.browser ?? globalThis.chrome;
  if (globalThis.__cofferLoaded) return;
  globalThis.__cofferLoaded = true;

  const send = (message) => api.runtime.sendMessage(message).catch((error) => ({ ok: false, error: { code: "failed", message: String(error) } }));

  // ---- Fields ----

  const USER_TYPES = new Set(["text", "email", "tel", ""]);

  function isPasswordField(element) {
    return element instanceof HTMLInputElement && element.type === "password";
  }

  function isUserField(element) {
    if (!(element instanceof HTMLInputElement) || !USER_TYPES.has(element.type)) return false;
    const hint = `${element.autocomplete} ${element.name} ${element.id} ${element.type}`.toLowerCase();
    return /user|login|email|e-mail|account|identifier/.test(hint) || Boolean(loginFields(element).password);
  }

  /** A field a person can see and reach: laid out, not hidden, not transparent, and not
   * covered by something else at its centre. Hidden or covered fields are never filled. */
  function isVisible(element) {
    const rect = element.getBoundingClientRect();
    if (rect.width < 2 || rect.height < 2) return false;
    const style = getComputedStyle(element);
    if (style.visibility !== "visible" || style.display === "none" || Number(style.opacity) < 0.1) return false;
    const x = rect.left + rect.width / 2, y = rect.top + rect.height / 2;
    if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) return true;  // off screen but laid out: scroll would show it
    const top = document.elementFromPoint(x, y);
    return top === element || element.contains(top) || (top instanceof HTMLLabelElement && top.control === element);
  }

  /** The username and password fields of the form (or page) around `field`. */
  function loginFields(field) {
    const scope = field.form ?? document;
    const inputs = [...scope.querySelectorAll("input")].filter((input) => !input.disabled && !input.readOnly);
    const passwords = inputs.filter(isPasswordField);
    const password = isPasswordField(field) ? field : passwords.find(isVisible) ?? passwords[0] ?? null;
    let user = isPasswordField(field) ? null : field;
    if (!user && password) {
      const before = inputs.slice(0, inputs.indexOf(password)).filter((input) => USER_TYPES.has(input.type));
      user = before.reverse().find((input) => /username|email/.test(input.autocomplete)) ?? before[0] ?? null;
    }
    const isNew = password?.autocomplete === "new-password";
    const confirm = isNew ? passwords.find((input) => input !== password && input.autocomplete === "new-password") ?? null : null;
    return { user, password, confirm, isNew };
  }

  /** Until when the focus moves of a fill must not open the list again. */
  let fillingUntil = 0;

  function setValue(input, value) {
    fillingUntil = performance.now() + 400;
    input.focus({ preventScroll: true });
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
    setter.call(input, value);  // past a page's own setter, as a person typing would be
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function fillFields(fields, credential) {
    let filled = 0;
    if (fields.user && credential.user && isVisible(fields.user)) { setValue(fields.user, credential.user); filled++; }
    if (fields.password && isVisible(fields.password)) { setValue(fields.password, credential.password); filled++; }
    if (fields.confirm && isVisible(fields.confirm)) setValue(fields.confirm, credential.password);
    return filled;
  }

  // ---- The inline list, in a closed shadow root ----

  let list = null;  // { host, root, items, index, fields, anchor }

  function closeList() {
    list?.host.remove();
    list = null;
  }

  function render(anchor, identities, locked, fields) {
    closeList();
    const host = document.createElement("coffer-suggestions");
    const root = host.attachShadow({ mode: "closed" });
    const rect = anchor.getBoundingClientRect();
    host.style.cssText = `all: initial; position: absolute; z-index: 2147483647; left: ${rect.left + scrollX}px; top: ${rect.bottom + scrollY + 2}px;`;
    root.innerHTML = `<style>
      .list { font: 13px system-ui, sans-serif; background: #fff; color: #111; border: 1px solid #bbb; border-radius: 6px;
              box-shadow: 0 4px 14px rgba(0,0,0,.2); min-width: ${Math.max(220, rect.width)}px; padding: 4px 0; }
      .item { display: flex; gap: 8px; align-items: baseline; padding: 6px 10px; cursor: pointer; }
      .item.active, .item:hover { background: #e8f0fe; }
      .user { font-weight: 600; } .site { color: #555; font-size: 12px; } .note { color: #9a6700; font-size: 11px; }
      .head { color: #666; font-size: 11px; padding: 2px 10px 4px; }
    </style><div class="list" role="listbox" aria-label="Coffer logins"></div>`;
    const box = root.querySelector(".list");
    const head = document.createElement("div");
    head.className = "head";
    head.textContent = locked ? "Coffer 🔒 — choose a login, then unlock" : "Coffer";
    box.append(head);
    const items = [];
    for (const identity of identities) {
      const item = document.createElement("div");
      item.className = "item";
      item.setAttribute("role", "option");
      const user = document.createElement("span");
      user.className = "user";
      user.textContent = identity.user || "(no user name)";
      const site = document.createElement("span");
      site.className = "site";
      site.textContent = identity.serviceIdentifier;
      item.append(user, site);
      if (identity.match === "registrable-domain") {
        const note = document.createElement("span");
        note.className = "note";
        note.textContent = "another host of this site";
        item.append(note);
      }
      item.dataset.record = identity.recordIdentifier;
      items.push({ element: item, action: () => fillChosen(identity.recordIdentifier, fields) });
      box.append(item);
    }
    if (fields.isNew) {
      const item = document.createElement("div");
      item.className = "item";
      item.setAttribute("role", "option");
      item.textContent = "Use a strong generated password";
      items.push({ element: item, action: () => fillGenerated(fields) });
      box.append(item);
    }
    if (items.length === 0) return;
    items.forEach((entry, index) => {
      entry.element.addEventListener("mousedown", (event) => {
        if (!event.isTrusted) return;  // a page's synthetic click fills nothing
        event.preventDefault();
        event.stopPropagation();
        choose(index);
      });
    });
    document.documentElement.append(host);
    list = { host, root, items, index: -1, fields, anchor };
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

  async function fillChosen(recordIdentifier, fields) {
    const started = performance.now();
    const answer = await send({ type: "fill", trigger: "choice", recordIdentifier });
    if (answer?.ok) {
      fillFields(fields, answer);
      document.documentElement.dataset.cofferFillMs = String(Math.round((performance.now() - started) * 10) / 10);
    }
  }

  async function fillGenerated(fields) {
    const answer = await send({ type: "generate" });
    if (!answer?.ok || !fields.password) return;
    setValue(fields.password, answer.password);
    if (fields.confirm) setValue(fields.confirm, answer.password);
  }

  async function suggestFor(field) {
    const fields = loginFields(field);
    if (!fields.password && !fields.user) return;
    const answer = await send({ type: "suggest" });
    if (!answer?.ok || document.activeElement !== field) return;
    render(field, answer.identities ?? [], answer.locked, fields);
  }

  function offerFor(event) {
    if (!event.isTrusted || performance.now() < fillingUntil) return;
    const field = event.target;
    if (list?.anchor === field && list.host.isConnected) return;
    if ((isPasswordField(field) || isUserField(field)) && isVisible(field)) suggestFor(field);
  }

  // Focusing a login field, or clicking one that already has the focus, shows the list.
  document.addEventListener("focusin", offerFor, true);
  document.addEventListener("mousedown", (event) => { if (event.target === document.activeElement) offerFor(event); }, true);

  document.addEventListener("focusout", (event) => {
    if (event.isTrusted && list && event.target === list.anchor) setTimeout(() => { if (document.activeElement !== list?.anchor) closeList(); }, 150);
  }, true);

  // Keyboard: ArrowDown from the field moves into the list, Enter fills, Escape closes, as the
  // browser's own autofill list does.
  document.addEventListener("keydown", (event) => {
    if (!event.isTrusted || !list || event.target !== list.anchor) return;
    if (event.key === "ArrowDown") { highlight(list.index + 1); event.preventDefault(); }
    else if (event.key === "ArrowUp") { highlight(list.index - 1); event.preventDefault(); }
    else if (event.key === "Enter" && list.index >= 0) { event.preventDefault(); event.stopPropagation(); choose(list.index); }
    else if (event.key === "Escape") { closeList(); event.preventDefault(); }
  }, true);

  addEventListener("scroll", () => closeList(), { passive: true });

  // ---- The keyboard command and the popup ----

  api.runtime.onMessage.addListener((message, sender, respond) => {
    if (sender.id !== api.runtime.id) return false;
    if (message.type === "commandFill") {
      if (!document.hasFocus()) return false;
      const field = document.activeElement;
      const fields = field instanceof HTMLInputElement ? loginFields(field) : firstLoginForm();
      if (!fields?.password) return false;
      send({ type: "fill", trigger: "command" }).then((answer) => {
        if (answer?.ok) fillFields(fields, answer);
        respond(answer);
      });
      return true;
    }
    if (message.type === "fillChosen" && window === window.top) {
      const fields = firstLoginForm();
      if (!fields) { respond({ ok: false, error: { code: "notFound", message: "no login form here" } }); return false; }
      fillChosen(message.recordIdentifier, fields).then(() => respond({ ok: true }));
      return true;
    }
    if (message.type === "showSaveBar" && window === window.top) {
      showSaveBar(message);
      return false;
    }
    return false;
  });

  function firstLoginForm() {
    const password = [...document.querySelectorAll("input[type=password]")].find(isVisible);
    return password ? loginFields(password) : null;
  }

  // ---- Saving after a submitted login ----

  function submitted(form) {
    const password = [...(form ?? document).querySelectorAll("input[type=password]")].find((input) => input.value);
    if (!password) return;
    const fields = loginFields(password);
    send({ type: "submitted", user: fields.user?.value ?? "", password: password.value });
  }

  document.addEventListener("submit", (event) => submitted(event.target), true);

  function showSaveBar({ user, host, state }) {
    document.querySelector("coffer-save-bar")?.remove();
    const bar = document.createElement("coffer-save-bar");
    const root = bar.attachShadow({ mode: "closed" });
    bar.style.cssText = "all: initial; position: fixed; z-index: 2147483647; top: 12px; right: 12px;";
    root.innerHTML = `<style>
      .bar { font: 13px system-ui, sans-serif; background: #fff; color: #111; border: 1px solid #bbb; border-radius: 8px;
             box-shadow: 0 4px 14px rgba(0,0,0,.25); padding: 12px 14px; max-width: 340px; }
      .text { margin-bottom: 10px; } button { font: inherit; margin-right: 6px; padding: 4px 10px; border-radius: 5px;
             border: 1px solid #999; background: #f6f6f6; cursor: pointer; } button.primary { background: #1a73e8; color: #fff; border-color: #1a73e8; }
    </style><div class="bar" role="dialog" aria-label="Coffer"><div class="text"></div>
      <button class="primary" data-action="save"></button><button data-action="never">Never for this site</button><button data-action="close">Not now</button></div>`;
    root.querySelector(".text").textContent = state === "new"
      ? `Save the login for ${user || "this account"} on ${host} in Coffer?`
      : `Update the password of ${user || "this account"} on ${host} in Coffer?`;
    root.querySelector("[data-action=save]").textContent = state === "new" ? "Save" : "Update";
    for (const button of root.querySelectorAll("button")) {
      button.addEventListener("click", (event) => {
        if (!event.isTrusted) return;
        bar.remove();
        if (button.dataset.action !== "close") send({ type: "saveAction", action: button.dataset.action });
      });
    }
    document.documentElement.append(bar);
  }

  // ---- On load: a save bar carried over from the page that was submitted; fill on load. ----

  async function onLoad() {
    if (window === window.top) {
      const answer = await send({ type: "pendingSave" });
      if (answer?.pending) showSaveBar(answer.pending);
    }
    const fields = firstLoginForm();
    if (fields && window === window.top) {
      const answer = await send({ type: "fill", trigger: "pageLoad" });
      if (answer?.ok) fillFields(fields, answer);
    }
  }

  onLoad();
})();
