#!/usr/bin/env python3
"""Turns secretlint's rule snapshots into the examples file
`tests/cli/peer_secrets.rs` plants (the schema of its module comment).

secretlint (https://github.com/secretlint/secretlint, MIT) tests each rule
with snapshot folders `packages/@secretlint/secretlint-rule-*/test/snapshots/*/`:
an input file and the `output.json` the rule must report on it. A secret
is the text at a reported message's `range`; a snapshot the rule reports
nothing on is a negative case, and each of its values that is one token
(a line that is one token, or a quoted string on a line) is a decoy
planted where its format alone decides. The rules were written by another
team for another scanner: mcpenv's rules were not tuned to them.

usage: secretlint.py REPO_GIT_DIR COMMIT > examples.json
(REPO_GIT_DIR is a clone or a bare repository; files are read with
`git show COMMIT:path`, no work tree needed.)
"""

import json
import re
import subprocess
import sys

from peer_common import kind_of

ROOT = "packages/@secretlint/"

# Rules that judge something other than a secret value: a file's name
# (no-dotenv), a home folder in a path (no-homedir), a Kubernetes Secret
# object (no-k8s-kind-secret), comments that switch rules off
# (filter-comments), patterns a user configures (pattern), the tutorial
# rule (example), and the presets, which repeat the rules' own snapshots.
NOT_VALUE_RULES = {
    "no-dotenv",
    "no-homedir",
    "no-k8s-kind-secret",
    "filter-comments",
    "pattern",
    "example",
    "preset-recommend",
    "preset-canary",
}

# Messages secretlint reports that name an identifier, not a secret: an
# AWS account id, an Azure tenant or client id.
IDENTIFIERS = {"AWSAccountID", "AzureTenantId", "AzureClientId"}


def git(git_dir, *args):
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], check=True, capture_output=True
    ).stdout


def env_name(message_id):
    """`MongoDBConnection` -> `MONGO_DB_CONNECTION`; `GITHUB_TOKEN` stays."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", message_id)
    name = re.sub(r"[^A-Z0-9]+", "_", spaced.upper()).strip("_")
    if not re.search(r"PASSWORD|SECRET|TOKEN|KEY|CONNECTION|AUTH|PRIV", name):
        name += "_KEY"
    return name


def utf16_slice(text, start, end):
    """secretlint's ranges count UTF-16 code units (JavaScript strings)."""
    encoded = text.encode("utf-16-le")
    return encoded[2 * start : 2 * end].decode("utf-16-le")


def self_identifying(value, kind, rule_source):
    """A format identifies itself when the secret starts with a literal of
    at least 3 characters written in the rule's own source (its prefix),
    as for Nosey Parker's rules; a PEM block always does."""
    if kind == "pem":
        return True
    # (a whole example quoted in the source, an allowed value, is no prefix)
    literals = re.sub(r"([\"'`])[^\"'`\n]{20,}\1", "", rule_source).replace("\\", "")
    return any(value[:n] in literals for n in range(3, min(len(value), 12) + 1))


def decoy_candidates(text):
    """The one-token values of a negative snapshot: a PEM block whole, else
    each quoted string and each line that is one token (comments out)."""
    if "-----BEGIN" in text:
        yield text.strip()
        return
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "//")):
            continue
        # A quoted string followed by `:` is a JSON key, not a value.
        quoted = re.findall(r'"([^"]*)"(?!\s*:)', line)
        if quoted:
            yield from quoted
        elif not re.search(r"\s", line):
            yield line


def other_schemes(examples, rule):
    """The URL schemes another rule's secrets with credentials use."""
    return {
        example["value"].split("://")[0]
        for example in examples
        if example["label"] == "tp"
        and example.get("kind") == "url"
        and "@" in example["value"]
        and example["rule"] != rule
    }


def main():
    git_dir, commit = sys.argv[1], sys.argv[2]
    files = git(git_dir, "ls-tree", "-r", "--name-only", commit, ROOT).decode().split("\n")
    snapshots = sorted(
        {path.rsplit("/", 1)[0] for path in files if "/test/snapshots/" in path and path.endswith("/output.json")}
    )
    out = []
    for snapshot in snapshots:
        rule = snapshot.split("/")[2].removeprefix("secretlint-rule-")
        if not snapshot.split("/")[2].startswith("secretlint-rule-") or rule in NOT_VALUE_RULES:
            continue
        case = snapshot.rsplit("/", 1)[1]
        output = json.loads(git(git_dir, "show", f"{commit}:{snapshot}/output.json"))
        # The input is `input*`, or the file the output names (`.npmrc`).
        named = output.get("filePath", "").rsplit("/", 1)[-1]
        inputs = [
            path
            for path in files
            if path.startswith(snapshot + "/input") or named and path == f"{snapshot}/{named}"
        ]
        base = {
            "source": "secretlint",
            "commit": commit,
            "file": snapshot,
            "rule": rule,
            "origin": "rule snapshot",
        }
        raw = git(git_dir, "show", f"{commit}:{inputs[0]}") if inputs else b""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            out.append(dict(base, id=f"{rule}/{case}", label="?", family=rule, value="", excluded="a binary input (a PKCS#12 file) is no config value"))
            continue
        source_paths = [p for p in files if p.startswith(f"{ROOT}secretlint-rule-{rule}/src/")]
        rule_source = "".join(git(git_dir, "show", f"{commit}:{p}").decode() for p in source_paths)
        messages = output.get("messages") or []
        for index, message in enumerate(messages):
            message_id = message.get("messageId") or rule
            start, end = message["range"]
            value = utf16_slice(text, start, end)
            # The secret itself, where the message's data names it (the
            # range may cover its assignment too).
            named_values = [
                data
                for data in (message.get("data") or {}).values()
                if isinstance(data, str) and len(data) >= 8 and data in text
            ]
            if named_values and not re.search(r"\s", max(named_values, key=len)):
                value = max(named_values, key=len)
            kind = kind_of(value)
            if kind == "pem" and value.lstrip().startswith("{"):
                # A service-account JSON file: one value, as an env var
                # holding it keeps it (compact, on one line).
                value = json.dumps(json.loads(value), separators=(",", ":"))
            entry = dict(base, id=f"{rule}/{case}:tp{index}", label="tp", family=message_id)
            name = env_name(message_id)
            if kind == "token" and "PASSWORD" in name:
                kind = "password"
            entry.update(
                value=value,
                kind=kind,
                fitting_name=name,
                self_identifying=self_identifying(value, kind, rule_source),
                excluded=None,
            )
            if message_id in IDENTIFIERS:
                entry["excluded"] = "an identifier, not a secret"
            elif re.search(r"\s", value) and kind != "pem":
                entry["excluded"] = "a value with blanks is not a token"
            out.append(entry)
        if messages:
            continue
        if case.startswith("ng."):
            out.append(dict(base, id=f"{rule}/{case}", label="?", family=rule, value="", excluded="a snapshot named as a finding that reports nothing: neither a secret nor a decoy"))
            continue
        if any(path == f"{snapshot}/.secretlintrc.json" for path in files) and b"allows" in git(
            git_dir, "show", f"{commit}:{snapshot}/.secretlintrc.json"
        ):
            out.append(dict(base, id=f"{rule}/{case}", label="?", family=rule, value="", excluded="the rule's options allow a value the user chose to permit: not a negative"))
            continue
        for index, value in enumerate(decoy_candidates(text)):
            entry = dict(base, id=f"{rule}/{case}:fp{index}", label="fp", family=rule, value=value, kind=kind_of(value))
            if re.search(r"\s", value) and entry["kind"] != "pem" or len(value) < 8:
                entry["excluded"] = "a text around a value, or too short to be one"
            elif re.fullmatch(r"(.)\1+", value):
                entry["excluded"] = "one character repeated: no format to mimic"
            else:
                entry.update(decoy_category="format-lookalike", excluded=None)
            out.append(entry)
    # A negative of one rule that is another rule's kind of secret (the
    # basic-auth rule leaves database URLs to the database rule) is no decoy.
    for entry in out:
        if entry["label"] == "fp" and not entry["excluded"] and entry["kind"] == "url":
            if entry["value"].split("://")[0] in other_schemes(out, entry["rule"]):
                entry["excluded"] = "another of its rules finds a secret in it (a URL of a scheme that rule reports)"
                entry.pop("decoy_category")
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
