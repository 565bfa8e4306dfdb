#!/usr/bin/env python3
"""Runs a command in a real pseudo-terminal and answers its prompts, for the CLI tests.

    pty_drive.py TRANSCRIPT COMMAND [ARGS...]   with the answers on stdin, one per line

Each answer is typed once the child has printed a prompt ending in ': ' or '] '. The full
terminal transcript (what a user would see, including any echo) is written to TRANSCRIPT, and the
child's exit code becomes ours.
"""
import os, pty, select, sys, time

transcript_path, command = sys.argv[1], sys.argv[2:]
answers = [line.rstrip("\n") for line in sys.stdin]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(command[0], command)
transcript = b""
deadline = time.time() + 30
while time.time() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.2)
    if ready:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        transcript += chunk
        if answers and (transcript.rstrip(b"\r\n").endswith(b": ") or transcript.endswith(b": ") or transcript.endswith(b"] ")):
            time.sleep(0.05)
            os.write(fd, (answers.pop(0) + "\n").encode())
            transcript += b"<typed>"
    else:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
try:
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        transcript += chunk
except OSError:
    pass
_, status = os.waitpid(pid, 0)
open(transcript_path, "wb").write(transcript)
sys.exit(os.waitstatus_to_exitcode(status))
