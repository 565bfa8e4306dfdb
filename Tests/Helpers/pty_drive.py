#!/usr/bin/env python3
"""Runs a command in a real pseudo-terminal and answers its prompts, for the CLI tests.

    pty_drive.py [--stdin FILE] [--deadline SECONDS] TRANSCRIPT COMMAND [ARGS...]
        with the answers on stdin, one per line

The pseudo-terminal is the child's controlling terminal (what /dev/tty opens). Its standard
input, output and error are the terminal too, unless --stdin gives it FILE as standard input:
a person at a terminal piping into the command (`printf … | coffer add … --password-stdin`).

Each answer is typed once the child has printed a prompt ending in ': ' or '] '. The full
terminal transcript (what a user would see, including any echo) is written to TRANSCRIPT, and the
child's exit code becomes ours. A child still running at the deadline (default 30 s) is killed,
'[pty_drive: killed at the deadline]' ends the transcript and the exit code is 124, as
timeout(1)'s: a prompt nobody answers fails the test instead of hanging it.
"""
import os, pty, select, signal, sys, time

arguments = sys.argv[1:]
stdin_path, deadline_seconds = None, 30.0
while arguments and arguments[0].startswith("--"):
    option, value = arguments[0], arguments[1]
    arguments = arguments[2:]
    if option == "--stdin":
        stdin_path = value
    elif option == "--deadline":
        deadline_seconds = float(value)
    else:
        sys.exit(f"pty_drive.py: unknown option {option}")
transcript_path, command = arguments[0], arguments[1:]
answers = [line.rstrip("\n") for line in sys.stdin]
pid, fd = pty.fork()
if pid == 0:
    if stdin_path is not None:
        source = os.open(stdin_path, os.O_RDONLY)
        os.dup2(source, 0)
        os.close(source)
    os.execvp(command[0], command)
transcript = b""
deadline = time.time() + deadline_seconds
status = None
while status is None and time.time() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.2)
    if ready:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            chunk = b""
        if chunk:
            transcript += chunk
            if answers and (transcript.rstrip(b"\r\n").endswith(b": ") or transcript.endswith(b": ") or transcript.endswith(b"] ")):
                time.sleep(0.05)
                os.write(fd, (answers.pop(0) + "\n").encode())
                transcript += b"<typed>"
            continue
    done, child_status = os.waitpid(pid, os.WNOHANG)
    if done:
        status = child_status
if status is None:
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    transcript += b"\n[pty_drive: killed at the deadline]\n"
    killed = True
else:
    killed = False
try:
    while True:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        transcript += chunk
except OSError:
    pass
open(transcript_path, "wb").write(transcript)
sys.exit(124 if killed else os.waitstatus_to_exitcode(status))
