#!/usr/bin/python3
"""Round trips of a warm coffer-browser-host: start it as the browser does, then time N
`suggest` and N `fill` (trigger command) requests for one origin, each from the write of the
request to the read of its answer; then the vault page's (SPEC.md §13.7): its first list (the
page opening: the host builds its table), a page of 100 rows, a search keystroke, one item; and,
when a `coffer` sits beside HOST, the list 1.5 s after a `coffer edit` of the vault (the host builds
its table again between requests, SPEC.md §13.7) and a 10 MiB file added in parts. Prints JSON with the medians in ms (the first
list and the one after the edit: once).

    host_latency.py HOST ORIGIN [N]      (COFFER_CONTAINER etc. from the environment)"""
import json
import os
import statistics
import struct
import subprocess
import sys
import time

host, origin = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 200
process = subprocess.Popen([host, "chrome-extension://dlecjfndaebcecnkcnnjndgabgahdbko/"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def ask(request):
    body = json.dumps(request).encode()
    process.stdin.write(struct.pack("<I", len(body)) + body)
    process.stdin.flush()
    length = struct.unpack("<I", process.stdout.read(4))[0]
    return json.loads(process.stdout.read(length))


def timed(request):
    samples = []
    for index in range(runs):
        started = time.perf_counter()
        answer = ask({**request, "id": index})
        samples.append((time.perf_counter() - started) * 1000)
        assert answer.get("ok"), answer
    return round(statistics.median(samples), 3)


ask({"id": -1, "type": "hello"})  # warm: the first request pays the process start
result = {"suggestMs": timed({"type": "suggest", "origin": origin}), "fillMs": timed({"type": "fill", "origin": origin, "trigger": "command"})}
started = time.perf_counter()
first = ask({"id": -2, "type": "vaultItems", "limit": 100})
result["vaultOpenMs"] = round((time.perf_counter() - started) * 1000, 3)
assert first.get("ok") and first["items"], first
result["vaultPageMs"] = timed({"type": "vaultItems", "offset": first["total"] // 2, "limit": 100})
# A keystroke of a search: the host reads the whole table for it (the page asks at each).
result["vaultSearchMs"] = timed({"type": "vaultItems", "query": origin.split("//")[-1][:6], "limit": 100})
result["vaultItemMs"] = timed({"type": "vaultItem", "recordIdentifier": first["items"][0]["recordIdentifier"]})
coffer = os.path.join(os.path.dirname(host), "coffer")
edit = [coffer, "edit", first["items"][0]["recordIdentifier"], "--tag", f"benchmark-{time.time_ns()}", "--no-interaction"]
if os.access(coffer, os.X_OK) and subprocess.run(edit, capture_output=True, stdin=subprocess.DEVNULL).returncode == 0:  # unlocked only
    time.sleep(1.5)
    started = time.perf_counter()
    assert ask({"id": -3, "type": "vaultItems", "limit": 100}).get("ok")
    result["vaultAfterEditMs"] = round((time.perf_counter() - started) * 1000, 3)
    # A 10 MiB file the page adds: 20 parts of 512 KiB, then the add that seals it (SPEC.md §13.3).
    import base64
    part, upload = base64.b64encode(os.urandom(512 * 1024)).decode(), None
    started = time.perf_counter()
    for index in range(20):
        answer = ask({"id": -10 - index, "type": "attachmentPart", "content": part, **({"upload": upload} if upload else {})})
        assert answer.get("ok"), answer
        upload = answer["upload"]
    name = f"benchmark-{time.time_ns()}.bin"
    added = ask({"id": -4, "type": "attachmentAdd", "recordIdentifier": first["items"][0]["recordIdentifier"], "name": name, "upload": upload})
    result["vaultAddFileMs"] = round((time.perf_counter() - started) * 1000, 3)
    assert added.get("ok"), added
    subprocess.run([coffer, "attachment", "rm", first["items"][0]["recordIdentifier"], name], capture_output=True, stdin=subprocess.DEVNULL)
process.stdin.close()
process.wait()
print(json.dumps(result))
