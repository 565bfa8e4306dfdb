// Which fields of a page are login fields, and which belong together (SPEC.md §13.6). Loaded
// before content.js into the same isolated world; it reads the page and writes nothing.
//
// The rules follow what the browsers' own password managers do (Firefox's LoginManagerChild
// and its form-type heuristics, Chromium's form parser): `autocomplete` tokens decide first;
// then the field's type and its words (name, id, label, placeholder, aria-label) and the words
// of its form; a user name is the nearest visible text-like field before the password that is
// no card, search or one-time-code field; a form's two or three password fields are sign-up or
// change-password fields as those browsers decide them. Card, search, newsletter and
// one-time-code fields are never login fields.
"use strict";

globalThis.cofferFields = globalThis.cofferFields ?? (() => {
  // Words in the languages the README lists (English, German, French, Spanish).
  const WORDS = {
    search: /search|\bq\b|query|suche|recherch|buscar|b[uú]squeda/,
    card: /card.?num|cc.?(num|exp|csc|cvc|name)|credit.?card|debit.?card|kreditkarte|karten.?nummer|num[eé]ro.?de.?carte|tarjeta|\bcvc|\bcvv|\bcsc\b|card.?code|card.?verification|card.?security|expir|exp.?date|ablauf|karteninhaber|card.?holder|name.?on.?card|titular/,
    securityCode: /security.?code|sicherheitscode|code.?de.?s[eé]curit[eé]|c[oó]digo.?de.?seguridad/,
    otp: /one.?time|\botp\b|2fa|two.?factor|totp|\bmfa\b|verification.?code|verify.?code|auth(entication)?.?code|sms.?code|einmal|best[aä]tigungscode|code.?de.?v[eé]rification|c[oó]digo.?de.?verificaci[oó]n/,
    username: /user|login|log.?in|account|identifier|member|customer|client|benutzer|nutzer|anmelde|kunden|konto|utilisateur|identifiant|compte|usuario|cuenta/,
    contact: /e.?mail|mail|courriel|correo|phone|mobile|\btel|telefon|t[eé]l[eé]phone|tel[eé]fono|m[oó]vil|handy/,
    confirm: /confirm|repeat|retype|re.?enter|again|verify|second|wiederhol|best[aä]tig|confirmer|confirmation|confirmar|repetir/,
    old: /\bold|current|existing|\balt|aktuell|bisherig|actuel|ancien|actual|anterior/,
    newsletter: /newsletter|subscribe|subscription|mailing.?list|abonnieren|abonnez|s.abonner|suscrib/,
    signIn: /sign.?in|log.?in|anmelden|einloggen|connexion|se connecter|iniciar sesi[oó]n|acceder|entrar/,
    signUp: /sign.?up|register|registration|create.?(an.?|your.?)?account|join|new.?account|registrier|konto (erstellen|anlegen)|cr[eé]er (un|votre) compte|inscri|crear (una )?cuenta|reg[ií]strate|registrarse/,
    change: /change.?(your.?)?password|update.?(your.?)?password|passwort [aä]ndern|changer.{0,20}mot de passe|cambiar.{0,20}contrase[nñ]a/,
    fresh: /\bnew|neue|nouveau|nouvelle|nuev|choose|create|w[aä]hle|choisi|elig/,
    checkout: /checkout|payment|pay now|billing|kasse|zahlung|bezahlen|paiement|payer|pago|pagar/,
  };

  /** autocomplete field names that say a field is something other than a login (HTML's
   * autofill field list); an unknown token (sites write "nope" to turn autofill off) says
   * nothing and the words decide. */
  const OTHER_TOKENS = new Set(["name", "honorific-prefix", "given-name", "additional-name", "family-name", "honorific-suffix",
    "nickname", "organization-title", "organization", "street-address", "address-line1", "address-line2", "address-line3",
    "address-level1", "address-level2", "address-level3", "address-level4", "country", "country-name", "postal-code",
    "transaction-currency", "transaction-amount", "language", "bday", "bday-day", "bday-month", "bday-year", "sex", "url", "photo", "impp"]);
  const TEXT_TYPES = new Set(["text", "email", "tel", "number", ""]);

  // ---- The tree, shadow roots included ----

  /** Every input under `root` in tree order, open shadow roots included (a form inside one,
   * or one root per field as Material/Lit text fields have). */
  function inputsUnder(root) {
    const found = [];
    const walk = (node) => {
      for (let child = node.firstElementChild; child; child = child.nextElementSibling) {
        if (child instanceof HTMLInputElement) found.push(child);
        if (child.shadowRoot) { watchRoot(child.shadowRoot); walk(child.shadowRoot); }
        walk(child);
      }
    };
    walk(root);
    return found;
  }

  /** The parent of `node`, stepping out of a shadow root to its host. */
  function parentOf(node) {
    return node.parentElement ?? (node.parentNode instanceof ShadowRoot ? node.parentNode.host : null);
  }

  /** The focused element, inside open shadow roots. */
  function deepActiveElement() {
    let element = document.activeElement;
    while (element?.shadowRoot?.activeElement) element = element.shadowRoot.activeElement;
    return element;
  }

  /** The element an event really happened on (focus and clicks inside a shadow root are
   * retargeted to its host). */
  function eventTarget(event) {
    return event.composedPath?.()[0] ?? event.target;
  }

  /** The form a field belongs to: its own, or the one around its shadow host. */
  function formOf(input) {
    if (input.form) return input.form;
    for (let node = parentOf(input); node; node = parentOf(node)) if (node instanceof HTMLFormElement) return node;
    return null;
  }

  // ---- Fields that were password fields ----
  //
  // A page's "show password" toggle turns the field into type=text: it is still the password
  // field (Chromium's hasBeenTypePassword). Every type change away from "password" is noted,
  // in the document and in each shadow root as it is found.

  const wasPassword = new WeakSet();
  const watchedRoots = new WeakSet();
  const typeChanges = new MutationObserver((records) => {
    for (const record of records) if (record.oldValue === "password") wasPassword.add(record.target);
  });
  function watchRoot(root) {
    if (watchedRoots.has(root)) return;
    watchedRoots.add(root);
    typeChanges.observe(root, { attributes: true, attributeFilter: ["type"], attributeOldValue: true, subtree: true });
  }
  watchRoot(document);

  function isPasswordLike(input) {
    return input.type === "password" || (wasPassword.has(input) && TEXT_TYPES.has(input.type));
  }

  // ---- Words ----

  /** The words a person reads for a field: its name, id, placeholder, aria-label, title, its
   * labels, and the label of the web component it lives in. */
  function wordsOf(input) {
    const parts = [input.name, input.id, input.placeholder, input.getAttribute("aria-label"), input.title];
    for (const label of input.labels ?? []) parts.push(label.textContent);
    for (const id of (input.getAttribute("aria-labelledby") ?? "").split(/\s+/).filter(Boolean)) {
      parts.push(input.getRootNode().getElementById?.(id)?.textContent);
    }
    const root = input.getRootNode();
    if (root instanceof ShadowRoot) {
      const host = root.host;
      parts.push(host.getAttribute("label"), host.getAttribute("name"), host.getAttribute("aria-label"), host.getAttribute("placeholder"));
      for (const label of root.querySelectorAll("label")) if (!label.control || label.control === input) parts.push(label.textContent);
    }
    return parts.filter(Boolean).join(" ").toLowerCase().replace(/\s+/g, " ").slice(0, 400);
  }

  /** The words of a field's surroundings: its form's text and attributes, or for a formless
   * field the nearest enclosing block that has a heading, a button or a sentence. */
  function contextWords(input) {
    const form = formOf(input);
    let text = "";
    if (form) {
      text = [form.id, form.name, form.getAttribute("action"), form.className, form.getAttribute("aria-label"), form.textContent].join(" ");
    } else {
      for (let node = parentOf(input), depth = 0; node && depth < 6; node = parentOf(node), depth++) {
        text = node.textContent ?? "";
        if (node.querySelector?.("h1, h2, h3, h4, legend, button, [type=submit]") || text.trim().length >= 20) break;
      }
    }
    return (text.slice(0, 2000) + " " + document.title).toLowerCase().replace(/\s+/g, " ");
  }

  /** The field name `autocomplete` gives, without section-, shipping/billing, contact-type and
   * webauthn tokens; null when there is none or it is on/off/unknown. */
  function autocompleteKind(input) {
    const skip = new Set(["shipping", "billing", "home", "work", "mobile", "fax", "pager", "webauthn"]);
    const tokens = (input.getAttribute("autocomplete") ?? "").toLowerCase().split(/\s+/)
      .filter((token) => token && !skip.has(token) && !token.startsWith("section-"));
    const token = tokens.at(-1);
    if (!token || token === "on" || token === "off") return null;
    if (token.startsWith("cc-")) return "card";
    if (token === "username") return "username";
    if (token === "current-password") return "current-password";
    if (token === "new-password") return "new-password";
    if (token === "one-time-code") return "otp";
    if (token === "email" || token === "tel" || token.startsWith("tel-")) return "contact";
    if (OTHER_TOKENS.has(token)) return "other";
    return null;
  }

  /**
   * What one field is, on its own: "password", "username", "contact" (an e-mail or phone
   * field that may be a user name), "text" (a text field without words either way), or a kind
   * that never takes a login: "card", "search", "otp", "other".
   */
  function kindOf(input) {
    if (!(input instanceof HTMLInputElement) || input.disabled) return "other";
    const hinted = autocompleteKind(input);
    if (hinted === "card" || hinted === "otp" || hinted === "other") return hinted;
    if (!isPasswordLike(input) && !TEXT_TYPES.has(input.type) && input.type !== "search") return "other";
    const words = wordsOf(input);
    if (input.type === "search" || input.closest("[role=search]") || formOf(input)?.getAttribute("role") === "search") return "search";
    if (hinted === "current-password" || hinted === "new-password") return "password";
    if (WORDS.card.test(words) || (WORDS.securityCode.test(words) && WORDS.checkout.test(contextWords(input)))) return "card";
    if (WORDS.otp.test(words)) return "otp";
    if (isPasswordLike(input)) return "password";
    if (hinted === "username") return "username";
    if (WORDS.search.test(words)) return "search";
    if (hinted === "contact") return "contact";
    if (WORDS.username.test(words)) return "username";
    if (WORDS.contact.test(words) || input.type === "email" || input.type === "tel") return "contact";
    return input.type === "number" ? "other" : "text";  // a number field is a user name only when its words say so
  }

  // ---- Visibility ----

  /** A field a person can see and reach: laid out, not hidden, not transparent, not covered
   * by something else at its centre, and where scrolling can bring it (a field at
   * `left: -9999px` cannot be scrolled to, so it is no field a person uses). */
  function isVisible(element) {
    const rect = element.getBoundingClientRect();
    if (rect.width < 2 || rect.height < 2) return false;
    const style = getComputedStyle(element);
    if (style.visibility !== "visible" || style.display === "none" || Number(style.opacity) < 0.1) return false;
    const page = document.documentElement;
    if (rect.right + scrollX <= 0 || rect.bottom + scrollY <= 0) return false;  // beyond the page's start: no scroll reaches it
    if (rect.left + scrollX >= Math.max(page.scrollWidth, innerWidth) || rect.top + scrollY >= Math.max(page.scrollHeight, innerHeight)) return false;
    const x = rect.left + rect.width / 2, y = rect.top + rect.height / 2;
    if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) return true;  // off screen but within the page: scrolling shows it
    let top = document.elementFromPoint(x, y);
    while (top?.shadowRoot) {  // into open shadow roots, down to what is really there
      const inner = top.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === top) break;
      top = inner;
    }
    if (!top) return false;
    if (top === element || element.contains(top)) return true;
    if (top instanceof HTMLLabelElement && top.control === element) return true;
    // A component's own decoration over its field (a floating label, an outline) counts as the field.
    const root = element.getRootNode();
    return root instanceof ShadowRoot && (top === root.host || root.contains(top));
  }

  // ---- Groups: which fields belong together ----

  function usable(input) {
    return !input.disabled && !input.readOnly && input.type !== "hidden";
  }

  /** The fields that can belong with `field`: its form's (shadow roots included), or for a
   * formless field every formless field of the page. */
  function scopeInputs(field) {
    const form = formOf(field);
    const inputs = form ? inputsUnder(form) : inputsUnder(document.documentElement).filter((input) => !formOf(input));
    return inputs.filter(usable);
  }

  /** Each password field of the scope as "current" or "new", as the browsers decide it. */
  function passwordRoles(passwords, field) {
    const roles = new Map();
    const context = contextWords(field);
    const unhinted = [];
    for (const input of passwords) {
      const token = autocompleteKind(input);
      if (token === "current-password") roles.set(input, "current");
      else if (token === "new-password") roles.set(input, "new");
      else unhinted.push(input);
    }
    if (unhinted.length === 0) return roles;
    const signUp = WORDS.signUp.test(context) && !WORDS.signIn.test(context.replace(WORDS.signUp, " "));
    const change = WORDS.change.test(context);
    const says = (input, words) => words.test(wordsOf(input));
    if (passwords.length === 1) {
      const only = unhinted[0];
      roles.set(only, signUp || says(only, WORDS.fresh) || (change && !says(only, WORDS.old)) ? "new" : "current");
      return roles;
    }
    // Two fields: the old and the new one when the first says it is the old one or the form
    // changes a password, else a new one and its confirmation (sign-up, reset). Three or more:
    // the first is the old one unless it says otherwise. A field after a new one is new.
    passwords.forEach((input, position) => {
      if (roles.has(input)) return;
      const afterNew = passwords.slice(0, position).some((other) => roles.get(other) === "new");
      const isOld = says(input, WORDS.old)
        || (position === 0 && (passwords.length >= 3 || change) && !says(input, WORDS.fresh) && !says(input, WORDS.confirm));
      roles.set(input, afterNew || !isOld ? "new" : "current");
    });
    return roles;
  }

  const USER_KINDS = new Set(["username", "contact", "text"]);

  /** The nearest visible field before `password` (in tree order) that can hold a user name:
   * no card, search, one-time-code or other field, and no field hidden or off the page. */
  function userBefore(inputs, password) {
    for (let index = inputs.indexOf(password) - 1; index >= 0; index--) {
      const input = inputs[index];
      if (!isVisible(input)) continue;  // a honeypot, hidden or off the page: passed over
      const kind = kindOf(input);
      if (kind === "password") return null;  // another login's password: no user name of this one
      if (USER_KINDS.has(kind)) return input;
    }
    return null;
  }

  /**
   * The login group of `field`, the field a person is in:
   * - `offer`: "logins" (suggest saved logins), "generated" (a new-password field: only a
   *   generated password) or null (offer nothing);
   * - `user`, `password`: the fields a chosen login fills (the password only a current one);
   * - `newPasswords`: the new-password field and its confirmations, for a generated password.
   */
  function loginGroup(field) {
    const none = { offer: null, user: null, password: null, newPasswords: [] };
    const kind = kindOf(field);
    if (!USER_KINDS.has(kind) && kind !== "password") return none;
    const inputs = scopeInputs(field);
    if (!inputs.includes(field)) inputs.push(field);
    const passwords = inputs.filter((input) => kindOf(input) === "password" && (input === field || isVisible(input)));
    const roles = passwordRoles(passwords, field);
    const newPasswords = passwords.filter((input) => roles.get(input) === "new");
    if (kind === "password") {
      if (roles.get(field) === "new") return { ...none, offer: "generated", newPasswords };
      return { offer: "logins", user: userBefore(inputs, field), password: field, newPasswords: [] };
    }
    // A user-name field: the password after it (the first in its group), if that one is
    // current and takes this field as its user name.
    const after = passwords.find((input) => inputs.indexOf(input) > inputs.indexOf(field));
    if (after) {
      if (roles.get(after) !== "current" || userBefore(inputs, after) !== field) return none;
      return { offer: "logins", user: field, password: after, newPasswords: [] };
    }
    if (passwords.length > 0) return none;  // fields after a login's password: not its user name
    // A user-name-only step (the first page of a two-step sign-in): only when the field says it
    // is a user name, or it is an e-mail/phone field in a sign-in that is no newsletter form.
    const context = contextWords(field);
    const explicit = autocompleteKind(field) === "username" || (kind === "username" && !WORDS.newsletter.test(context));
    const signIn = kind === "contact" && WORDS.signIn.test(context) && !WORDS.newsletter.test(context) && !WORDS.signUp.test(context);
    return explicit || signIn ? { offer: "logins", user: field, password: null, newPasswords: [] } : none;
  }

  /** The first visible current-password field of the page (the keyboard command, the popup,
   * fill on load) and its group. */
  function firstLoginGroup() {
    for (const input of inputsUnder(document.documentElement)) {
      if (!usable(input) || kindOf(input) !== "password" || !isVisible(input)) continue;
      const group = loginGroup(input);
      if (group.offer === "logins") return group;
    }
    return null;
  }

  /** What a submitted form asks to save: its user name and the password it sets (a new one
   * on sign-up and change forms, else the one typed). */
  function submittedLogin(scope) {
    const inputs = (scope ? inputsUnder(scope) : inputsUnder(document.documentElement)).filter(usable);
    const passwords = inputs.filter((input) => kindOf(input) === "password" && input.value);
    if (passwords.length === 0) return null;
    const roles = passwordRoles(passwords, passwords[0]);
    const password = passwords.find((input) => roles.get(input) === "new") ?? passwords[0];
    const user = userBefore(inputs, passwords[0]);
    return { user: user?.value ?? "", password: password.value };
  }

  return { kindOf, loginGroup, firstLoginGroup, submittedLogin, isVisible, deepActiveElement, eventTarget };
})();
