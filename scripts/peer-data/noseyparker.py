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


def main():
    rules_dir, commit = Path(sys.argv[1]), sys.argv[2]
    out = []
    # A rule's negative examples are negatives for that rule only: a Slack
    # bot token is one for the user-token rule. One that another rule
    # finds is that rule's secret, not a decoy.
    every_pattern = []
    for path in sorted(rules_dir.glob("*.yml")):
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
                else:
                    entry.update(decoy_category="format-lookalike", excluded=None)
                out.append(entry)
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
