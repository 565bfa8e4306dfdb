"""A small Chrome DevTools Protocol client for Coffer's browser tests: one websocket to the
browser, flattened sessions per target, and the few helpers the cases need (navigate, evaluate,
trusted mouse and key events, the DOM through closed shadow roots, screenshots)."""
import base64
import json
import threading
import time

import websocket  # Debian's python3-websocket


class CDPError(Exception):
    pass


# What Chromium answers an evaluation asked while its page navigates.
BETWEEN_DOCUMENTS = ("Inspected target navigated or closed", "Execution context was destroyed",
                     "Cannot find context with specified id")


class Browser:
    def __init__(self, url):
        self.socket = websocket.create_connection(url, timeout=30)
        self.next_id = 0
        self.lock = threading.Lock()
        self.events = []

    def call(self, method, params=None, session=None, timeout=30):
        with self.lock:
            self.next_id += 1
            message_id = self.next_id
        message = {"id": message_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        deadline = time.time() + timeout
        while time.time() < deadline:
            reply = json.loads(self.socket.recv())
            if reply.get("id") == message_id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)
        raise CDPError(f"{method}: no answer in {timeout} s")

    def wait_event(self, method, session=None, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for index, event in enumerate(self.events):
                if event.get("method") == method and (session is None or event.get("sessionId") == session):
                    return self.events.pop(index)
            self.socket.settimeout(max(0.1, deadline - time.time()))
            try:
                self.events.append(json.loads(self.socket.recv()))
            except websocket.WebSocketTimeoutException:
                pass
            finally:
                self.socket.settimeout(30)
        raise CDPError(f"no {method} in {timeout} s")

    def targets(self):
        return self.call("Target.getTargets")["targetInfos"]

    def attach(self, target_id):
        return self.call("Target.attachToTarget", {"targetId": target_id, "flatten": True})["sessionId"]

    def new_page(self, url="about:blank"):
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        page = Page(self, target, self.attach(target))
        page.navigate(url)
        return page


class Page:
    def __init__(self, browser, target, session):
        self.browser, self.target, self.session = browser, target, session
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method, params=None, timeout=30):
        return self.browser.call(method, params, self.session, timeout)

    def navigate(self, url):
        self.browser.events = [e for e in self.browser.events if e.get("sessionId") != self.session]
        self.call("Page.navigate", {"url": url})
        self.browser.wait_event("Page.loadEventFired", self.session)
        time.sleep(0.3)  # content scripts run at document_idle

    def evaluate(self, expression, await_promise=False):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": await_promise})
        if "exceptionDetails" in result:
            raise CDPError(f"evaluate {expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait(self, expression, timeout=10, interval=0.02):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                value = self.evaluate(expression)
            except CDPError as error:
                # Asked while the page is between two documents (a submitted form, a followed
                # link): the next document is asked on the next round.
                if not any(text in str(error) for text in BETWEEN_DOCUMENTS):
                    raise
                value = None
            if value:
                return value
            time.sleep(interval)
        return None

    def choose_file(self, selector, path):
        """What choosing `path` in the file dialog of the file input `selector` does: the file is
        set on it and its change event fires."""
        root = self.call("DOM.getDocument")["root"]["nodeId"]
        node = self.call("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
        self.call("DOM.setFileInputFiles", {"files": [path], "nodeId": node})

    def click_at(self, x, y):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def click(self, selector):
        box = self.evaluate(f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                            " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        self.click_at(*box)

    def key(self, key, code, virtual):
        for kind in ("rawKeyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": virtual})

    def type_text(self, text):
        self.call("Input.insertText", {"text": text})

    def shadow_items(self, host_name, item_class):
        """Centres of the elements of class `item_class` inside the (closed) shadow root of the
        page's `host_name` element: DevTools sees through closed roots; the page does not."""
        root = self.call("DOM.getDocument", {"depth": -1, "pierce": True})["root"]
        found = []

        def walk(node, inside):
            here = inside or node.get("nodeName", "").lower() == host_name
            attributes = node.get("attributes", [])
            classes = dict(zip(attributes[::2], attributes[1::2])).get("class", "").split()
            if inside and item_class in classes:
                found.append(node)
            for child in node.get("children", []) + node.get("shadowRoots", []):  # not into frames: their own documents
                walk(child, here)
        walk(root, False)
        centres = []
        for node in found:
            quad = self.call("DOM.getBoxModel", {"backendNodeId": node["backendNodeId"]})["model"]["content"]
            centres.append(((quad[0] + quad[4]) / 2, (quad[1] + quad[5]) / 2))
        return centres

    def shadow_text(self, host_name):
        """The text inside the (closed) shadow roots of the page's `host_name` elements."""
        root = self.call("DOM.getDocument", {"depth": -1, "pierce": True})["root"]
        texts = []

        def walk(node, inside):
            here = inside or node.get("nodeName", "").lower() == host_name
            if inside and node.get("nodeType") == 3:
                texts.append(node.get("nodeValue", ""))
            for child in node.get("children", []) + node.get("shadowRoots", []):
                walk(child, here)
        walk(root, False)
        return " ".join(texts)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        self.browser.call("Target.closeTarget", {"targetId": self.target})
