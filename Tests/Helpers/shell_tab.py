#!/usr/bin/env python3
"""Presses Tab in a real interactive shell, as a person does, and reports the words each line
then holds — the only honest test of what completion inserts (quoting included).

    shell_tab.py SHELL SCRIPT [--tabs N] TYPED...

SHELL is bash, zsh or fish; SCRIPT the file `coffer completion SHELL` printed. In a
pseudo-terminal the shell loads SCRIPT; then for each TYPED, that text is typed, Tab pressed (N
times, default 1), and the line turned into `printf '[%s]\\n' <line>` (Ctrl-A, text, Ctrl-E,
Enter), so the shell itself prints each word of the completed line as a command would receive
it. For each TYPED the words are printed one per line on stdout, then a line `--`. PATH and the
rest of the environment are the caller's. Gives up after 30 s (exit 124).
"""
import os, pty, re, select, sys, time

arguments = sys.argv[1:]
tabs = 1
if "--tabs" in arguments:
    at = arguments.index("--tabs")
    tabs = int(arguments[at + 1])
    del arguments[at:at + 2]
shell, script, lines = arguments[0], arguments[1], arguments[2:]
if shell == "bash":
    argv = ["bash", "--norc", "--noprofile", "-i"]
    setup = f"PS1='$ '; bind 'set bell-style none' 2>/dev/null; source '{script}'\n"
elif shell == "zsh":
    argv = ["zsh", "-f", "-i"]
    setup = f"PS1='$ '; fpath=('{os.path.dirname(script)}' $fpath); autoload -Uz compinit; compinit -u -D; unsetopt beep\n"
elif shell == "fish":
    argv = ["fish", "--no-config", "-i"]
    setup = f"function fish_prompt; echo -n '$ '; end; source '{script}'\n"
else:
    sys.exit(f"shell_tab.py: unknown shell {shell}")

environment = dict(os.environ, TERM="dumb" if shell != "fish" else "xterm", HISTFILE="/dev/null")
pid, fd = pty.fork()
if pid == 0:
    os.execvpe(argv[0], argv, environment)

deadline = time.time() + 30
output = b""

def read_available(wait):
    """Reads what the terminal has within `wait` seconds; returns whether anything came."""
    global output
    ready, _, _ = select.select([fd], [], [], wait)
    if not ready:
        return False
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        return False
    output += chunk
    return bool(chunk)

def settle(quiet=0.25, longest=3.0):
    """Waits until the terminal has been quiet for `quiet` seconds (a completion has run)."""
    end = min(time.time() + longest, deadline)
    last = time.time()
    while time.time() < end:
        if read_available(0.05):
            last = time.time()
        elif time.time() - last >= quiet:
            return

def wait_for(text):
    while time.time() < deadline:
        if text.encode() in output:
            return True
        read_available(0.05)
    return False

def give_up(reason):
    os.kill(pid, 9)
    sys.stderr.write(f"shell_tab.py: {reason}\n--- terminal ---\n{output.decode('utf-8', 'replace')}\n")
    sys.exit(124)

settle(quiet=0.2)
os.write(fd, setup.encode())
# The marker's echo on the command line reads @@ready-''@@; only its output reads @@ready-@@.
os.write(fd, b"echo @@ready-''@@\n")
if not wait_for("@@ready-@@"):
    give_up("the shell did not start")
settle(quiet=0.1)
results = []
for number, typed in enumerate(lines):
    os.write(fd, typed.encode())
    settle(quiet=0.1)
    for _ in range(tabs):
        before_tab = len(output)
        os.write(fd, b"\t")
        settle()
    start = len(output)
    os.write(fd, b"\x01")  # Ctrl-A: to the start of the line
    os.write(fd, b"printf '[%s]\\n' ")
    os.write(fd, b"\x05")  # Ctrl-E: back to the end
    os.write(fd, f"; echo @@done-''{number}@@\r".encode())
    if not wait_for(f"@@done-{number}@@"):
        give_up(f"the line {typed!r} did not run")
    text = output[start:].decode("utf-8", "replace").replace("\r", "")
    text = re.sub(r"\x1b\][^\x07]*\x07|\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]", "", text)  # fish draws with escapes
    text = text[:text.index(f"@@done-{number}@@")]
    words = []
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]") and "printf" not in stripped:
            words.append(stripped[1:-1])
    results.append(words)
    settle(quiet=0.1)
os.write(fd, b"exit\r")
settle(quiet=0.1, longest=0.5)
try:
    os.kill(pid, 9)
except ProcessLookupError:
    pass
for words in results:
    print("\n".join(words + ["--"]))
