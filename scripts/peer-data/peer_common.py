"""What the peer-data scripts share: how a value is planted (its kind)."""

import re


def kind_of(value):
    """`pem` for a PEM block, `url` for `scheme://…` (`jdbc:mysql://` too),
    else `token`."""
    if "-----BEGIN" in value:
        return "pem"
    if re.match(r"^[a-z][a-z0-9+.:-]*://", value, re.I):
        return "url"
    return "token"
