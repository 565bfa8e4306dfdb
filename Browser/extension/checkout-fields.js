// Which fields of a page are payment-card and address fields, which of them belong together, and
// what each takes from a card or an identity (SPEC.md §13.6.1). Loaded after fields.js and before
// content.js into the same isolated world; it reads the page and writes only through `fill`.
//
// As the browsers' own autofill decides (Chromium's form structure, Firefox's FormAutofill
// heuristics): `autocomplete` tokens first (HTML's `cc-*` and address field names, with their
// `section-*`, `shipping` and `billing` groups); without them the field's words — name, id,
// label, placeholder, aria-label — in English, German, French and Spanish. A group is the form
// (or the page's formless fields) cut where the autocomplete section changes or a part repeats,
// so a checkout's card and its shipping address, or its shipping and billing addresses, are
// filled one at a time. Only fields a person can see are ever filled.
"use strict";

globalThis.cofferCheckout = globalThis.cofferCheckout ?? (() => {
  const { isVisible } = globalThis.cofferFields;

  const CARD_TOKENS = {
    "cc-name": "cardholder", "cc-given-name": "cardholderGiven", "cc-family-name": "cardholderFamily", "cc-number": "number",
    "cc-exp": "expiry", "cc-exp-month": "expiryMonth", "cc-exp-year": "expiryYear", "cc-csc": "securityCode", "cc-type": "brand",
  };
  const ADDRESS_TOKENS = {
    "name": "fullName", "honorific-prefix": "title", "given-name": "givenName", "additional-name": "middleName", "family-name": "familyName",
    "organization": "company", "street-address": "street", "address-line1": "line1", "address-line2": "line2", "address-line3": "line3",
    "address-level2": "city", "address-level1": "region", "postal-code": "postalCode", "country": "country", "country-name": "country",
    "tel": "phone", "tel-national": "phone", "email": "email",
  };

  // Words, most specific first: a card's before an address's, "address line 2" before "address".
  const CARD_WORDS = [
    ["expiry", /\bmm\s*\/\s*(yy|aa|jj)/],  // one field for both: "MM/YY", "MM/AAAA", "MM / JJ"
    ["securityCode", /\bcvc|\bcvv|\bcsc\b|\bcid\b|security.?code|card.?code|card.?verification|sicherheitscode|pr[uü]f(nummer|ziffer)|cryptogramme|code.?de.?s[eé]curit[eé]|c[oó]digo.?de.?seguridad/],
    ["expiryMonth", /(expir|exp\b|exp.?date|valid|ablauf|g[uü]ltig|caducidad|vencimiento).*(month|monat|mois|\bmes\b|\bmm\b)|(month|monat|mois|\bmes\b).*(expir|ablauf|g[uü]ltig|caducidad|vencimiento)|cc.?month|exp.?m(onth)?\b/],
    ["expiryYear", /(expir|exp\b|exp.?date|valid|ablauf|g[uü]ltig|caducidad|vencimiento).*(year|jahr|ann[eé]e|\ba[nñ]o\b|\byy)|(year|jahr|ann[eé]e|\ba[nñ]o\b).*(expir|ablauf|g[uü]ltig|caducidad|vencimiento)|cc.?year|exp.?y(ear)?\b/],
    ["expiry", /expir|exp.?date|\bexp\b|valid.?(thru|through|until)|mm.?\/.?yy|ablauf|g[uü]ltig.?bis|date.?d.?expiration|date.?de.?validit[eé]|caducidad|vencimiento|fecha.?de.?expiraci[oó]n/],
    ["cardholder", /card.?holder|name.?on.?(the.?)?card|cc.?name|karteninhaber|name.?auf.?der.?karte|titulaire|nom.?(sur|du.?porteur)|titular|nombre.?(en.?la.?tarjeta|del.?titular)/],
    ["brand", /card.?type|card.?brand|kartentyp|type.?de.?carte|tipo.?de.?tarjeta/],
    ["number", /card.?(num|no\b|#)|cc.?num|credit.?card|debit.?card|kartennummer|karten.?nr|num[eé]ro.?de.?(la.?)?carte|n[uú]mero.?de.?(la.?)?tarjeta/],
  ];
  const ADDRESS_WORDS = [
    ["email", /e.?mail|courriel|correo/],
    ["phone", /phone|\btel\b|telephone|mobile|telefon|t[eé]l[eé]phone|tel[eé]fono|m[oó]vil|handy/],
    ["postalCode", /\bzip|postal|post.?code|postleitzahl|\bplz\b|code.?postal|c[oó]digo.?postal/],
    ["country", /country|\bland\b|\bpays\b|pa[ií]s/],
    ["region", /\bstate\b|province|region|county|bundesland|r[eé]gion|provincia|\bestado\b|d[eé]partement/],
    ["city", /\bcity|town|\bort\b|stadt|ville|ciudad|localidad|municipio/],
    ["company", /company|organi[sz]ation|\bfirma|unternehmen|soci[eé]t[eé]|entreprise|empresa/],
    ["line2", /address.?(line)?.?2|apartment|\bapt\b|suite|\bunit\b|adresszusatz|compl[eé]ment|piso|departamento|\bline.?2/],
    ["line1", /address.?(line)?.?1|street|stra(ss|ß)e|adresse|\brue\b|direcci[oó]n|\bcalle|\baddress\b|anschrift|domicilio/],
    ["givenName", /first.?name|given.?name|\bfname|forename|vorname|pr[eé]nom|\bnombre\b(?!.*(complet|apellido))/],
    ["familyName", /last.?name|family.?name|surname|\blname|nachname|nom.?de.?famille|apellido/],
    ["fullName", /full.?name|your.?name|vollst[aä]ndiger.?name|nom.?complet|nombre.?completo|^name\b|\bname$|\bnom\b/],
  ];

  /** The autocomplete tokens of a field: its group (`section-*`, `shipping`, `billing`) and its
   * field name; null when it has none or says nothing (on, off, a site's "nope"). */
  function autocomplete(element) {
    const tokens = (element.getAttribute("autocomplete") ?? "").toLowerCase().split(/\s+/).filter(Boolean);
    const name = tokens.at(-1);
    if (!name || !(name in CARD_TOKENS || name in ADDRESS_TOKENS)) return null;
    const group = tokens.filter((token) => token.startsWith("section-") || token === "shipping" || token === "billing").join(" ");
    return { name, group };
  }

  function words(element) {
    const parts = [element.name, element.id, element.getAttribute("placeholder"), element.getAttribute("aria-label"), element.title];
    for (const label of element.labels ?? []) parts.push(label.textContent);
    return parts.filter(Boolean).join(" ").toLowerCase().replace(/[_\-]+/g, " ").replace(/\s+/g, " ").trim().slice(0, 300);
  }

  const FILLABLE_INPUTS = new Set(["text", "email", "tel", "number", "month", "search", ""]);

  /** What a field is: `{section: "card" | "address", part, group}`, or null. A search box, a
   * password field, a login's user name and a hidden field are none. */
  function partOf(element) {
    const isInput = element instanceof HTMLInputElement, isSelect = element instanceof HTMLSelectElement;
    const isText = element instanceof HTMLTextAreaElement;
    if (!(isInput || isSelect || isText) || element.disabled || element.readOnly) return null;
    if (isInput && element.type === "search") return null;
    const token = autocomplete(element);
    // A card's security code may be a password field; nothing else of a password type is.
    if (isInput && element.type === "password") {
      const code = token ? token.name === "cc-csc" : CARD_WORDS.find(([part]) => part === "securityCode")[1].test(words(element));
      return code ? { section: "card", part: "securityCode", group: token?.group ?? "" } : null;
    }
    if (isInput && !FILLABLE_INPUTS.has(element.type)) return null;
    if (token) {
      if (token.name in CARD_TOKENS) return { section: "card", part: CARD_TOKENS[token.name], group: token.group };
      return { section: "address", part: ADDRESS_TOKENS[token.name], group: token.group };
    }
    const text = words(element);
    if (!text || /search|suche|recherch|buscar|coupon|gutschein|promo|discount|gift/.test(text)) return null;
    if (/user.?name|login|password|passwort|mot.?de.?passe|contrase/.test(text)) return null;
    for (const [part, pattern] of CARD_WORDS) if (pattern.test(text)) return { section: "card", part, group: "" };
    for (const [part, pattern] of ADDRESS_WORDS) {
      // A street in a textarea is the whole street address, every line.
      if (pattern.test(text)) return { section: "address", part: isText && part === "line1" ? "street" : part, group: "" };
    }
    return null;
  }

  /** Every input, select and textarea under `root` in tree order, open shadow roots included. */
  function controlsUnder(root) {
    const found = [];
    const walk = (node) => {
      for (let child = node.firstElementChild; child; child = child.nextElementSibling) {
        if (child instanceof HTMLInputElement || child instanceof HTMLSelectElement || child instanceof HTMLTextAreaElement) found.push(child);
        if (child.shadowRoot) walk(child.shadowRoot);
        walk(child);
      }
    };
    walk(root);
    return found;
  }

  function formOf(element) {
    if (element.form) return element.form;
    for (let node = element.parentElement; node; node = node.parentElement) if (node instanceof HTMLFormElement) return node;
    return null;
  }

  /** The fields that belong with `field`: of its form (or the page's formless fields), of its
   * section, cut where the autocomplete group changes or a part comes again. Visible ones only. */
  function sectionOf(field) {
    const own = partOf(field);
    if (!own) return [];
    const form = formOf(field);
    const controls = (form ? controlsUnder(form) : controlsUnder(document.documentElement).filter((element) => !formOf(element)))
      .map((element) => ({ element, ...partOf(element) })).filter((entry) => entry.section === own.section);
    // Runs: a new one starts at a group change or at a part already in the run (a second
    // postal code is another address). The number may repeat (split over several inputs).
    const runs = [];
    let run = [];
    for (const entry of controls) {
      const repeated = entry.part !== "number" && run.some((other) => other.part === entry.part);
      if (run.length && (repeated || run[0].group !== entry.group)) { runs.push(run); run = []; }
      run.push(entry);
    }
    if (run.length) runs.push(run);
    const mine = runs.find((candidate) => candidate.some((entry) => entry.element === field)) ?? [];
    return mine.filter((entry) => entry.element === field || isVisible(entry.element));
  }

  /** Whether `field` should offer cards or identities: a card section that has a number (or the
   * field is a card field of its own frame's processor form); an address section with a street,
   * city or postal code and one more part. A lone e-mail or phone field, or a contact form's
   * name and e-mail, offers nothing. */
  function offerFor(field) {
    if (!isVisible(field)) return null;
    const own = partOf(field);
    if (!own) return null;
    const section = sectionOf(field);
    const parts = new Set(section.map((entry) => entry.part));
    if (own.section === "card") {
      const tokened = autocomplete(field) !== null;
      return parts.has("number") || (tokened && window !== window.top) ? "card" : null;
    }
    const place = ["street", "line1", "postalCode", "city"].some((part) => parts.has(part));
    return place && parts.size >= 2 ? "identity" : null;
  }

  // ---- What each part takes ----

  const MONTHS = [
    ["january", "jan", "januar", "janvier", "enero"], ["february", "feb", "februar", "février", "fevrier", "febrero"],
    ["march", "mar", "märz", "maerz", "mars", "marzo"], ["april", "apr", "avril", "abril"], ["may", "mai", "mayo"],
    ["june", "jun", "juni", "juin", "junio"], ["july", "jul", "juli", "juillet", "julio"], ["august", "aug", "août", "aout", "agosto"],
    ["september", "sep", "sept", "septembre", "septiembre"], ["october", "oct", "okt", "oktober", "octobre", "octubre"],
    ["november", "nov", "novembre", "noviembre"], ["december", "dec", "dez", "dezember", "décembre", "decembre", "diciembre"],
  ];

  const pad = (number) => String(number).padStart(2, "0");

  /** The text a part takes from the chosen item, in the form the field asks for. */
  function valueFor(entry, item) {
    const card = item.card ?? {}, person = item.identity ?? {};
    const { element, part } = entry;
    const size = Number(element.getAttribute("maxlength")) || 0;
    const hint = `${element.getAttribute("placeholder") ?? ""} ${element.getAttribute("aria-label") ?? ""}`.toLowerCase();
    switch (part) {
      case "number": return card.number;
      case "cardholder": return card.cardholder;
      case "cardholderGiven": return card.cardholder?.split(" ").slice(0, -1).join(" ");
      case "cardholderFamily": return card.cardholder?.split(" ").at(-1);
      case "brand": return card.brand;
      case "securityCode": return card.code;
      case "expiryMonth": return card.expiryMonth && pad(card.expiryMonth);
      case "expiryYear": return card.expiryYear && (size === 2 || /\byy\b|jj\b|aa\b/.test(hint) && !/yyyy|jjjj|aaaa/.test(hint) ? pad(card.expiryYear % 100) : String(card.expiryYear));
      case "expiry": {
        if (!card.expiryMonth || !card.expiryYear) return undefined;
        // The attribute, not the property: a browser without a month picker shows a text field, and
        // the page still expects what type=month submits.
        if (element.getAttribute("type")?.toLowerCase() === "month") return `${card.expiryYear}-${pad(card.expiryMonth)}`;
        const long = size >= 7 || /yyyy|jjjj|aaaa/.test(hint);
        return `${pad(card.expiryMonth)}/${long ? card.expiryYear : pad(card.expiryYear % 100)}`;
      }
      case "title": return person.title;
      case "givenName": return person.givenName;
      case "middleName": return person.middleName;
      case "familyName": return person.familyName;
      case "fullName": return [person.givenName, person.middleName, person.familyName].filter(Boolean).join(" ");
      case "company": return person.company;
      case "street": return (person.addressLines ?? []).join(element instanceof HTMLTextAreaElement ? "\n" : ", ");
      case "line1": return person.addressLines?.[0];
      case "line2": return person.addressLines?.[1];
      case "line3": return person.addressLines?.slice(2).join(", ");
      case "city": return person.city;
      case "region": return person.region;
      case "postalCode": return person.postalCode;
      case "country": return person.country ? (element instanceof HTMLSelectElement ? person.country : item.countryName ?? person.country) : undefined;
      case "phone": return person.phone;
      case "email": return person.email;
      default: return undefined;
    }
  }

  /** The texts an option may show for a value: a month as 7, 07, its name in four languages; a
   * year as 2029 or 29; a country as its code or English name. */
  function spellings(part, value, item) {
    const text = String(value).toLowerCase();
    if (part === "expiryMonth") {
      const month = Number(value);
      return [String(month), pad(month), ...MONTHS[month - 1]];
    }
    if (part === "expiryYear") return [text, text.slice(-2)];
    if (part === "country") return [text, (item.countryName ?? "").toLowerCase(), item.countryAlpha3?.toLowerCase()].filter(Boolean);
    return [text];
  }

  /** The option of `select` that shows `value`: by its value or its text, exactly or as the
   * start of "07 - July"; null when none does. */
  function optionFor(select, part, value, item) {
    const wanted = spellings(part, value, item).map((spelling) => spelling.normalize("NFC"));
    const clean = (text) => text.toLowerCase().normalize("NFC").trim().replace(/\s+/g, " ");
    const options = [...select.options].filter((option) => !option.disabled);
    return options.find((option) => wanted.includes(clean(option.value)) || wanted.includes(clean(option.text)))
      ?? options.find((option) => wanted.some((spelling) => new RegExp(`^${spelling.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`).test(clean(option.text))))
      ?? null;
  }

  /** Fills the section's fields with `item` (the host's answer): each visible field its part's
   * value, a number split over several inputs piece by piece. `setValue` writes one field as a
   * person's typing would. */
  function fill(section, item, setValue) {
    const numbers = section.filter((entry) => entry.part === "number");
    let rest = item.card?.number ?? "";
    for (const entry of section) {
      if (!isVisible(entry.element)) continue;
      let value = valueFor(entry, item);
      if (entry.part === "number" && numbers.length > 1) {
        const size = Number(entry.element.getAttribute("maxlength")) || 4;
        value = entry === numbers.at(-1) ? rest : rest.slice(0, size);
        rest = rest.slice(value.length);
      }
      if (value === undefined || value === null || value === "") continue;
      if (entry.element instanceof HTMLSelectElement) {
        const option = optionFor(entry.element, entry.part, value, item);
        if (option) setValue(entry.element, option.value);
      } else {
        setValue(entry.element, String(value));
      }
    }
  }

  /** The first visible card field of this document with a `cc-*` name: in a processor's frame,
   * what a choice made in its sibling frame fills. */
  function firstCardField() {
    return controlsUnder(document.documentElement).find((element) => autocomplete(element)?.name in CARD_TOKENS && isVisible(element)) ?? null;
  }

  /** The card a submitted form carries, read as a person typed it, or null: a number of 12 to
   * 19 digits is needed. Selects and inputs for month and year, one combined expiry field. */
  function submittedCard(scope) {
    const entries = controlsUnder(scope ?? document.documentElement).map((element) => ({ element, ...partOf(element) }))
      .filter((entry) => entry.section === "card" && entry.element.value);
    const value = (part) => entries.filter((entry) => entry.part === part).map((entry) => entry.element.value.trim()).join("");
    const number = value("number").replace(/[\s-]/g, "");
    if (!/^\d{12,19}$/.test(number)) return null;
    const year = (text) => { const digits = Number(text); return text.length === 2 ? 2000 + digits : text.length === 4 ? digits : undefined; };
    const card = { number, cardholder: value("cardholder") || [value("cardholderGiven"), value("cardholderFamily")].filter(Boolean).join(" ") };
    const combined = value("expiry").match(/^(\d{1,2})\s*[/-]\s*(\d{2}|\d{4})$|^(\d{4})-(\d{2})$/);
    if (combined) {
      card.expiryMonth = Number(combined[1] ?? combined[4]);
      card.expiryYear = year(combined[2] ?? combined[3]);
    } else {
      const month = value("expiryMonth").match(/^\d{1,2}$/) ? Number(value("expiryMonth")) : undefined;
      if (month >= 1 && month <= 12) card.expiryMonth = month;
      if (/^(\d{2}|\d{4})$/.test(value("expiryYear"))) card.expiryYear = year(value("expiryYear"));
    }
    const code = value("securityCode");
    if (/^\d{3,4}$/.test(code)) card.securityCode = code;
    return card;
  }

  return { partOf, sectionOf, offerFor, fill, firstCardField, submittedCard };
})();
