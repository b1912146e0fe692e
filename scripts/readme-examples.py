#!/usr/bin/python3
"""Reruns every `$ crest ...` example of a Markdown file and compares its output.

Usage: scripts/readme-examples.py CREST [--update] [FILE.md ...]   (default: README.md)

An example is a fenced block without a language whose lines start with
`$ crest`; the lines after each command, up to the next command or the fence,
are its output as printed (an output cut short ends with a line "…": it is
compared up to the same paragraph). The commands of one block run in order in one fresh
folder (so `var/crest.db` is that block's own database), with this build's
crest in place of `crest`. Wall-clock figures (a sweep's seconds and GEMMs/s)
are compared as a shape, not a value. Without --update it prints a diff of
each example that no longer prints what the file says and exits 1; with
--update it rewrites the file's outputs from this build.
"""
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile

_CUT = "…"  # an output written only in part ends with this line
# What changes from run to run: the sweep's host time line.
_VOLATILE = [(re.compile(r"\d+(\.\d+)? s, \d+ GEMMs/s"), "<seconds> s, <rate> GEMMs/s")]


def normalized(lines):
    out = []
    for line in lines:
        for pattern, mask in _VOLATILE:
            line = pattern.sub(mask, line)
        out.append(line)
    return out


def blocks(lines):
    """(first line, last line) of each fenced block without a language that holds `$ crest`."""
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            if lines[i].rstrip() == "```" and any(
                    line.startswith("$ crest ") for line in lines[i + 1:j]):
                yield i + 1, j
            i = j + 1
        else:
            i += 1


def outputs(body):
    """Each command line of a block with the output lines written after it."""
    runs = []
    for line in body:
        if line.startswith("$ "):
            runs.append((line, []))
        elif runs:
            runs[-1][1].append(line)
    return runs


def cut_like(written, fresh):
    """A written output ending in "…" is cut there: the fresh one is cut before
    the same paragraph (counted by blank lines), and ends in "…" too."""
    if not written or written[-1] != _CUT:
        return fresh
    paragraphs = sum(1 for line in written if not line.strip())
    blank = 0
    for i, line in enumerate(fresh):
        if not line.strip():
            blank += 1
            if blank > paragraphs:
                return fresh[:i] + [_CUT]
    return fresh


def run_block(crest, body):
    """The block's text with each command's output as this build prints it now."""
    out = []
    with tempfile.TemporaryDirectory() as work:
        os.makedirs(os.path.join(work, "var"))
        for line, written in outputs(body):
            out.append(line)
            argv = shlex.split(line[2:])
            if argv[0] != "crest":
                raise SystemExit(f"not a crest command: {line}")
            done = subprocess.run([crest, *argv[1:]], cwd=work, capture_output=True, text=True,
                                  check=False)
            # A failing command's message is its output; a working one's stderr is
            # progress, which a terminal overwrites.
            text = done.stdout + (done.stderr if done.returncode else "")
            out.extend(cut_like(written, text.rstrip("\n").split("\n")))
    return out


def check_file(crest, path, update):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    stale, new_lines, last = 0, [], 0
    for first, end in blocks(lines):
        body = lines[first:end]
        fresh = run_block(crest, body)
        new_lines += lines[last:first]
        if normalized(fresh) != normalized(body):
            stale += 1
            if not update:
                sys.stdout.writelines(difflib.unified_diff(
                    [line + "\n" for line in body], [line + "\n" for line in fresh],
                    f"{path}:{first + 1} (as written)", "as this build prints it"))
        new_lines += fresh  # written only with --update
        last = end
    new_lines += lines[last:]
    if update and stale:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(new_lines))
    return stale


def main():
    args = [a for a in sys.argv[1:] if a != "--update"]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    crest, files = os.path.abspath(args[0]), args[1:] or ["README.md"]
    update = "--update" in sys.argv
    stale = sum(check_file(crest, path, update) for path in files)
    verb = "rewritten" if update else "stale"
    print(f"{stale} example block(s) {verb} in {', '.join(files)}")
    return 1 if stale and not update else 0


if __name__ == "__main__":
    sys.exit(main())
