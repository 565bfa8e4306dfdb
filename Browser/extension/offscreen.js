// The offscreen document's one task (offscreen.html): empty the clipboard when the worker asks.
"use strict";

chrome.runtime.onMessage.addListener((message, sender, respond) => {
  if (sender.id !== chrome.runtime.id || message?.type !== "offscreenEmptyClipboard") return false;
  respond({ ok: emptyClipboard(document) });
  return false;
});
