"""A small WebDriver BiDi client for Coffer's browser tests in Firefox: one websocket to the
browser's /session endpoint, and a Page with the same helpers as cdp.Page (navigate, evaluate,
wait, trusted mouse and key input, the DOM through closed shadow roots, screenshots), so the
cases are written once for both browsers."""
import base64
import json
import threading
import time

import websocket  # Debian's python3-websocket

import cdp


class BiDiError(Exception):
    pass


def deserialize(value):
    """A BiDi remote value as a Python value (primitives, arrays, objects; nodes as None)."""
    kind = value.get("type")
    if kind in ("string", "number", "boolean"):
        return value.get("value")
    if kind in ("undefined", "null"):
        return None
    if kind == "array":
        return [deserialize(item) for item in value.get("value", [])]
    if kind == "object":
        return {key if isinstance(key, str) else deserialize(key): deserialize(item) for key, item in value.get("value", [])}
    return None


class Browser:
    def __init__(self, url):
        # Firefox's remote agent refuses a handshake that carries an Origin header.
        self.socket = websocket.create_connection(url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.lock = threading.Lock()
        self.events = []

    def call(self, method, params=None, timeout=30):
        with self.lock:
            self.next_id += 1
            message_id = self.next_id
        self.socket.send(json.dumps({"id": message_id, "method": method, "params": params or {}}))
        deadline = time.time() + timeout
        while time.time() < deadline:
            reply = json.loads(self.socket.recv())
            if reply.get("id") == message_id:
                if reply.get("type") == "error":
                    raise BiDiError(f"{method}: {reply.get('error')}: {reply.get('message')}")
                return reply.get("result", {})
            self.events.append(reply)
        raise BiDiError(f"{method}: no answer in {timeout} s")

    def new_page(self, url="about:blank"):
        context = self.call("browsingContext.create", {"type": "tab"})["context"]
        page = Page(self, context)
        page.navigate(url)
        return page


class Page:
    def __init__(self, browser, context):
        self.browser, self.context = browser, context

    def navigate(self, url):
        self.browser.call("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"})
        time.sleep(0.4)  # content scripts run at document_idle

    def evaluate(self, expression, await_promise=False):
        result = self.browser.call("script.evaluate", {
            "expression": expression, "target": {"context": self.context}, "awaitPromise": await_promise, "resultOwnership": "none"})
        if result.get("type") == "exception":
            raise BiDiError(f"evaluate {expression!r}: {result.get('exceptionDetails', {}).get('text')}")
        return deserialize(result.get("result", {}))

    def choose_file(self, selector, path):
        """What choosing `path` in the file dialog of the file input `selector` does (BiDi's
        input.setFiles, which fires its input and change events)."""
        result = self.browser.call("script.evaluate", {
            "expression": f"document.querySelector({json.dumps(selector)})", "target": {"context": self.context},
            "awaitPromise": False, "resultOwnership": "root"})
        self.browser.call("input.setFiles", {"context": self.context, "element": {"sharedId": result["result"]["sharedId"]}, "files": [path]})

    # Written once, in terms of evaluate and click_at: cdp.Page's.
    wait = cdp.Page.wait
    click = cdp.Page.click

    def click_at(self, x, y):
        self.browser.call("input.performActions", {"context": self.context, "actions": [{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": [
                {"type": "pointerMove", "x": int(round(x)), "y": int(round(y))},
                {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}]})

    KEYS = {"Escape": "\ue00c", "Enter": "\ue007", "ArrowDown": "\ue015", "ArrowUp": "\ue013", "Tab": "\ue004"}

    def key(self, key, code=None, virtual=None):
        value = self.KEYS.get(key, key)
        self.browser.call("input.performActions", {"context": self.context, "actions": [{
            "type": "key", "id": "keyboard", "actions": [{"type": "keyDown", "value": value}, {"type": "keyUp", "value": value}]}]})

    def type_text(self, text):
        actions = []
        for character in text:
            actions += [{"type": "keyDown", "value": character}, {"type": "keyUp", "value": character}]
        self.browser.call("input.performActions", {"context": self.context, "actions": [{"type": "key", "id": "keyboard", "actions": actions}]})

    def _shadow_roots(self, host_name):
        """The shadow roots of the page's `host_name` elements, as BiDi references: the driver
        sees closed roots; the page does not."""
        result = self.browser.call("script.evaluate", {
            "expression": f"[...document.querySelectorAll({json.dumps(host_name)})]", "target": {"context": self.context},
            "awaitPromise": False, "resultOwnership": "root",
            "serializationOptions": {"maxDomDepth": 0, "includeShadowTree": "all"}})
        roots = []
        for node in result.get("result", {}).get("value", []):
            shadow = node.get("value", {}).get("shadowRoot")
            if shadow and shadow.get("sharedId"):
                roots.append(shadow["sharedId"])
        return roots

    def _in_shadow(self, host_name, function, argument):
        answers = []
        for shared_id in self._shadow_roots(host_name):
            result = self.browser.call("script.callFunction", {
                "functionDeclaration": function, "target": {"context": self.context}, "awaitPromise": False,
                "arguments": [{"sharedId": shared_id}, {"type": "string", "value": argument}], "resultOwnership": "none"})
            answers.append(deserialize(result.get("result", {})))
        return answers

    def shadow_items(self, host_name, item_class):
        """Centres of the elements of class `item_class` inside the shadow roots of `host_name`."""
        found = self._in_shadow(host_name, "(root, name) => [...root.querySelectorAll('.' + name)].map((element) => {"
                                " const r = element.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })", item_class)
        return [tuple(centre) for centres in found for centre in centres or []]

    def shadow_text(self, host_name):
        return " ".join(self._in_shadow(host_name, "(root) => root.textContent", ""))

    def screenshot(self, path):
        data = self.browser.call("browsingContext.captureScreenshot", {"context": self.context})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        self.browser.call("browsingContext.close", {"context": self.context})
