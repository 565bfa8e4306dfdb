// The vault page's audit view: `coffer audit`'s findings, each opening its item.
"use strict";

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
