#!/usr/bin/env python3
"""Runs a command on a pseudo-terminal and answers its prompts, as a person typing would.

    on-terminal.py PROMPT ANSWER [PROMPT ANSWER ...] -- COMMAND [ARG ...]

Each ANSWER (and a line break) is typed once PROMPT has appeared in what the command wrote; nothing is typed ahead
of its prompt. Everything the command wrote is copied to standard output, and the exit status is the command's.
A prompt that never comes ends the run when the command ends (it cannot wait for ever on input it never gets:
the terminal is closed once every answer is given and the command ends)."""
import os
import pty
import sys


def main():
    args = sys.argv[1:]
    split = args.index("--")
    pairs, command = args[:split], args[split + 1:]
    answers = [(pairs[i].encode(), pairs[i + 1].encode() + b"\n") for i in range(0, len(pairs), 2)]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(command[0], command)
    seen = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        while answers and answers[0][0] in seen:
            prompt, answer = answers.pop(0)
            seen = seen[seen.index(prompt) + len(prompt):]
            os.write(fd, answer)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))


main()
