// Emptying the clipboard, shared by Firefox's background page and Chromium's offscreen
// document (offscreen.html): a `copy` whose data is set to "" — no selection, no focus needed,
// only the extension's clipboardWrite permission.
"use strict";

function emptyClipboard(doc) {
  const onCopy = (event) => {
    event.clipboardData.setData("text/plain", "");
    event.preventDefault();
  };
  doc.addEventListener("copy", onCopy);
  try {
    return doc.execCommand("copy");
  } finally {
    doc.removeEventListener("copy", onCopy);
  }
}
