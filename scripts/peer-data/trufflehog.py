#!/usr/bin/env python3
"""Turns TruffleHog's detector pattern tests into the examples file
`tests/cli/peer_secrets.rs` plants (the schema of its module comment).

TruffleHog (https://github.com/trufflesecurity/trufflehog) is AGPL-3.0:
none of its text goes into this repository. This script reads a clone
and writes the examples under `target/` (never committed); the test that
plants them skips, saying so, when the file is absent.

Each detector's `*_test.go` (not the integration tests) has a pattern
test: cases of an `input` text and the `want`ed results. A wanted string
that stands in its input whole, one token, is a secret of that detector
(results TruffleHog assembles, an id glued to a secret, stand nowhere in
the input and are left out). A case that wants nothing gives decoys: the
tokens of its input that look like one of that detector's secrets (about
the same length and the same first characters, or mostly the same
characters) but are none of them. The detectors were written by another
team for another scanner, and mcpenv's rules were never adjusted to them.

A secret goes under `<DETECTOR>_API_KEY`; it identifies itself (is also
planted under a neutral name) when every secret of its detector starts
with the same three characters or more and the detector's own pattern
(a `regexp.MustCompile` line of its source) holds them: a prefix of its
format, not fixtures that happen to start alike.

usage: trufflehog.py REPO_GIT_DIR COMMIT > target/peer-secrets/trufflehog/examples.json
(REPO_GIT_DIR is a clone or a bare repository; files are read with
`git show COMMIT:path`, no work tree needed.)
"""

import difflib
import json
import os
import re
import subprocess
import sys

from peer_common import kind_of

LITERAL = r"(?:`[^`]*`|\"(?:\\.|[^\"\\])*\")"
CASE = re.compile(
    rf"input:\s*({LITERAL})\s*,\s*want:\s*(nil|\[\]string\{{(?:\s*{LITERAL}\s*,?)*\s*\}})",
    re.S,
)
STRING = re.compile(r"`[^`]*`|\"(?:\\.|[^\"\\])*\"")
HOST = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)+(?::[0-9]{1,5})?")
TOKEN = re.compile(r"[A-Za-z0-9_\-./+~]{8,}={0,2}")


def go_string(literal):
    if literal.startswith("`"):
        return literal[1:-1]
    try:
        return json.loads(literal)
    except ValueError:
        return literal[1:-1]


def git(repo, *args):
    return subprocess.run(
        ["git", f"--git-dir={repo}", *args], capture_output=True, text=True, check=True
    ).stdout


def format_prefix(values, source):
    """The longest start (3 characters or more) every value shares that a
    pattern line of the detector's source holds, or ``""``."""
    prefix = os.path.commonprefix(values) if len(values) >= 2 else values[0]
    patterns = [line for line in source.split("\n") if "MustCompile" in line]
    for end in range(len(prefix), 2, -1):
        if any(prefix[:end] in line for line in patterns):
            return prefix[:end]
    return ""


def files_in(repo, commit, folder):
    """The detector's own Go files (not its tests) in `folder`."""
    return [
        path
        for path in git(repo, "ls-tree", "--name-only", commit, folder + "/").split("\n")
        if path.endswith(".go") and not path.endswith("_test.go")
    ]


def main():
    repo, commit = sys.argv[1], sys.argv[2]
    files = [
        path
        for path in git(repo, "ls-tree", "-r", "--name-only", commit, "pkg/detectors").split("\n")
        if path.endswith("_test.go") and not path.endswith("_integration_test.go")
    ]
    out = []
    for path in sorted(files):
        text = git(repo, "show", f"{commit}:{path}")
        if "_Pattern(" not in text:
            continue
        detector = path.split("/")[2]
        secrets, negatives = [], []
        for input_literal, want in CASE.findall(text):
            text_in = go_string(input_literal)
            if want == "nil":
                negatives.append(text_in)
                continue
            for literal in STRING.findall(want):
                value = go_string(literal)
                if value not in text_in or re.search(r"\s", value) or len(value) < 8:
                    continue
                # A server's name or address without credentials is the
                # context a detector reports with, not a secret.
                if HOST.fullmatch(value) or (
                    kind_of(value) == "url" and "@" not in value and "?" not in value
                ):
                    continue
                # So is a connection string with no password in it
                # (`jdbc:sqlite:/data/test.db`).
                if value.startswith("jdbc:") and not re.search(r":[^:/@]+@|password=", value):
                    continue
                if value not in secrets:
                    secrets.append(value)
        if not secrets:
            continue
        base = {
            "source": "trufflehog",
            "commit": commit,
            "file": path,
            "rule": detector,
            "family": detector,
            "origin": "detector pattern test",
        }
        folder = path.rsplit("/", 1)[0]
        source = "".join(
            git(repo, "show", f"{commit}:{other}")
            for other in files_in(repo, commit, folder)
        )
        prefix = format_prefix(secrets, source)
        name = re.sub(r"[^A-Z0-9]+", "_", detector.upper()).strip("_") + "_API_KEY"
        for index, value in enumerate(secrets):
            kind = kind_of(value)
            out.append(
                dict(
                    base,
                    id=f"{detector}:{path.split('/')[-2] if path.count('/') > 3 else ''}tp{index}",
                    label="tp",
                    value=value,
                    kind=kind,
                    fitting_name=name,
                    self_identifying=len(prefix) >= 3 or kind == "pem",
                    excluded=None,
                )
            )
        seen = set()
        for negative in negatives:
            for token in TOKEN.findall(negative):
                token = token.strip(".,;:'\"")
                if token in secrets or token in seen:
                    continue
                close = any(
                    abs(len(token) - len(secret)) <= 4
                    and (
                        token[:4] == secret[:4]
                        or difflib.SequenceMatcher(None, token, secret).ratio() >= 0.6
                    )
                    for secret in secrets
                )
                if not close:
                    continue
                seen.add(token)
                out.append(
                    dict(
                        base,
                        id=f"{detector}:fp{len(seen) - 1}",
                        label="fp",
                        value=token,
                        kind=kind_of(token),
                        decoy_category="format-lookalike",
                        excluded=None,
                    )
                )
    # Ids unique across a detector's versions (`v1/`, `v2/`).
    counts = {}
    for entry in out:
        counts[entry["id"]] = counts.get(entry["id"], 0) + 1
        if counts[entry["id"]] > 1:
            entry["id"] += f"-{counts[entry['id']]}"
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
