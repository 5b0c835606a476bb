#!/usr/bin/env python3
"""Turns Nosey Parker's rule examples into the examples file
`tests/cli/peer_secrets.rs` plants (the schema of its module comment).

Nosey Parker (https://github.com/praetorian-inc/noseyparker, Apache-2.0)
writes, for each rule, `examples` (texts its pattern must match) and
`negative_examples` (texts it must not). A secret is the pattern's first
capture group in an example; a negative example that is one token (no
blank, one line) is a decoy planted where its format alone decides. The
rules were written by another team for another scanner: mcpenv's rules
were not tuned to them.

A negative example means "this rule's pattern must not match this text",
not "this text is not a secret". Two rules, both about Nosey Parker's own
files (never about what mcpenv finds), keep a negative example that is a
secret out of the decoys:

(a) one that the rules file itself says should be matched: a YAML comment
    with FIXME or TODO and "match" or "detect" right above the
    `negative_examples:` key covers the whole block, one inside the block
    covers the next example (`yaml.safe_load` drops comments, so the
    text is read with `yaml.compose`'s line numbers);
(b) one that contains the secret part of any positive example, of any
    rule (the captured value, and a URI's password): Nosey Parker labels
    that secret a secret elsewhere. Parts shorter than 12 characters are
    not compared (`secret`, `password`, `D1fficult` are words that turn
    up in unrelated text).

usage: noseyparker.py RULES_DIR COMMIT > examples.json
"""

import json
import re
import sys
import warnings
from pathlib import Path

# sre_parse gives the pattern's tree (its literal prefix); deprecated, not gone.
warnings.filterwarnings("ignore", category=DeprecationWarning)
import sre_constants  # noqa: E402
import sre_parse  # noqa: E402

import yaml

from peer_common import kind_of


def env_name(rule_name):
    """`Anthropic API Key` -> `ANTHROPIC_API_KEY`: an env name that fits."""
    return re.sub(r"[^A-Z0-9]+", "_", rule_name.upper()).strip("_")


def literal_prefix(pattern):
    """The literal characters the first capture group starts with."""
    parsed = sre_parse.parse(pattern)

    def first_group(items):
        for op, arg in items:
            if op == sre_constants.SUBPATTERN and arg[0] == 1:
                return arg[3]
            if op == sre_constants.SUBPATTERN:
                found = first_group(arg[3])
                if found is not None:
                    return found
            if op == sre_constants.BRANCH:
                for branch in arg[1]:
                    found = first_group(branch)
                    if found is not None:
                        return found
        return None

    group = first_group(parsed) or []
    prefix = ""
    for op, arg in group:
        if op == sre_constants.LITERAL:
            prefix += chr(arg)
        elif op == sre_constants.SUBPATTERN:
            inner = ""
            for inner_op, inner_arg in arg[3]:
                if inner_op != sre_constants.LITERAL:
                    break
                inner += chr(inner_arg)
            else:
                prefix += inner
                continue
            prefix += inner
            break
        else:
            break
    return prefix


SAYS_MATCH = re.compile(r"(?i)\b(?:FIXME|TODO)\b.*\b(?:match|detect)")
SHORTEST_SHARED_SECRET = 12


def negatives_said_to_match(text):
    """{(rule id, index)} of negative examples the file's own FIXME/TODO
    comments say should be matched (rule (a) of the module comment)."""
    lines = text.splitlines()
    comments = [
        number
        for number, line in enumerate(lines)
        if line.lstrip().startswith("#") and SAYS_MATCH.search(line)
    ]
    said = set()
    root = yaml.compose(text)
    rules = next(value for key, value in root.value if key.value == "rules")
    for rule in rules.value:
        fields = {key.value: (key, value) for key, value in rule.value}
        if "negative_examples" not in fields:
            continue
        rule_id = fields["id"][1].value
        key, block = fields["negative_examples"]
        items = [item.start_mark.line for item in block.value]
        for number in comments:
            between = lines[number + 1 : key.start_mark.line]
            if number < key.start_mark.line and all(
                not line.strip() or line.lstrip().startswith("#") for line in between
            ):
                said.update((rule_id, index) for index in range(len(items)))
            elif items and key.start_mark.line < number < items[-1]:
                index = next(i for i, line in enumerate(items) if line > number)
                said.add((rule_id, index))
    return said


def secret_parts(value):
    """A positive example's secret, and a URI's password inside it."""
    parts = [value]
    userinfo = re.match(r"[a-z][a-z0-9+.-]*://[^:/@\s]*:([^@\s]+)@", value)
    if userinfo:
        parts.append(userinfo.group(1))
    return [part for part in parts if len(part) >= SHORTEST_SHARED_SECRET]


def main():
    rules_dir, commit = Path(sys.argv[1]), sys.argv[2]
    out = []
    # A rule's negative examples are negatives for that rule only: a Slack
    # bot token is one for the user-token rule. One that another rule
    # finds is that rule's secret, not a decoy.
    every_pattern = []
    said_to_match = set()
    for path in sorted(rules_dir.glob("*.yml")):
        said_to_match |= negatives_said_to_match(path.read_text())
        for rule in yaml.safe_load(path.read_text())["rules"]:
            categories = rule.get("categories") or []
            if "secret" in categories and "identifier" not in categories:
                try:
                    every_pattern.append(re.compile(rule["pattern"]))
                except re.error:
                    pass
    for path in sorted(rules_dir.glob("*.yml")):
        for rule in yaml.safe_load(path.read_text())["rules"]:
            try:
                pattern = re.compile(rule["pattern"])
                prefix = literal_prefix(rule["pattern"])
            except re.error as error:
                print(f"{rule['id']}: pattern does not compile in Python: {error}", file=sys.stderr)
                continue
            family = rule["name"]
            categories = rule.get("categories") or []
            # Nosey Parker's own classification: an identifier (an AWS
            # account id, a client id, a bucket) or a public token is
            # found by it, but is not a secret.
            if "secret" not in categories or "identifier" in categories:
                continue
            base = {
                "source": "noseyparker",
                "commit": commit,
                "file": f"crates/noseyparker/data/default/builtin/rules/{path.name}",
                "rule": rule["id"],
                "family": family,
                "origin": "rule example",
            }
            for index, example in enumerate(rule.get("examples") or []):
                match = pattern.search(example)
                entry = dict(base, id=f"{rule['id']}:tp{index}", label="tp")
                if not match:
                    out.append(dict(entry, value="", excluded="the rule's own pattern does not match it in Python"))
                    continue
                groups = [group for group in match.groups() if group]
                whole = match.group(0).strip()
                name = env_name(family)
                if len(groups) <= 1:
                    value = groups[0] if groups else whole
                elif not re.search(r"\s", whole) and ("://" in whole or ";" in whole):
                    # A URI or a connection string with its credentials:
                    # the value as a config holds it.
                    value = whole
                else:
                    # A user and a password (or an id and a secret): the
                    # secret is the last, kept under a name saying so.
                    value = groups[-1]
                    if not re.search(r"PASSWORD|SECRET|TOKEN|KEY", name):
                        name += "_PASSWORD"
                kind = kind_of(value)
                # A password goes where passwords go (its own name,
                # `--password`), not after `--api-key` or `Bearer`.
                if kind == "token" and re.search(r"PASSWORD|CREDENTIALS", name):
                    kind = "password"
                entry.update(
                    value=value,
                    kind=kind,
                    fitting_name=name,
                    # A format identifies itself when the secret starts
                    # with a literal of its own, not only its context does.
                    self_identifying=len(prefix) >= 3 or kind == "pem",
                    excluded=None,
                )
                if re.search(r"\s", value) and kind != "pem":
                    entry["excluded"] = "a value with blanks is not a token"
                out.append(entry)
            for index, example in enumerate(rule.get("negative_examples") or []):
                value = example.strip()
                entry = dict(base, id=f"{rule['id']}:fp{index}", label="fp", value=value, kind=kind_of(value))
                if re.search(r"\s", value) or len(value) < 8:
                    entry["excluded"] = "a text around a value, or too short to be one"
                elif re.fullmatch(r"(.)\1+", value):
                    entry["excluded"] = "one character repeated: no format to mimic"
                elif any(other.search(value) for other in every_pattern):
                    entry["excluded"] = "another of its rules finds a secret in it"
                elif (rule["id"], index) in said_to_match:
                    entry["excluded"] = "its rules file says it should be matched (a FIXME/TODO comment)"
                else:
                    entry.update(decoy_category="format-lookalike", excluded=None)
                out.append(entry)
    # Rule (b): a decoy holding a secret a positive example gives.
    secrets = {
        part
        for entry in out
        if entry["label"] == "tp" and not entry["excluded"]
        for part in secret_parts(entry["value"])
    }
    for entry in out:
        if entry["label"] == "fp" and not entry["excluded"]:
            if any(secret in entry["value"] for secret in secrets):
                entry.pop("decoy_category")
                entry["excluded"] = "it holds a secret Nosey Parker labels a secret elsewhere"
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
