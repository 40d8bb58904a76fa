#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Parse every .rst file under Documentation/ with docutils and fail on any
# warning or error. Sphinx-only directives and roles are accepted as no-ops;
# toctree entries must name existing documents. Every file must start with
# an SPDX line.
#
# Usage: scripts/check-rst.sh [DOCDIR]   (default: Documentation/ of the tree)
# Needs python3 and docutils (Debian: python3-docutils).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
docdir=${1:-$root/Documentation}

[ -d "$docdir" ] || { echo "check-rst: no directory $docdir" >&2; exit 2; }
python3 -c 'import docutils' 2>/dev/null || {
	echo "check-rst: python3 docutils missing (apt install python3-docutils)" >&2
	exit 2
}

mapfile -d '' files < <(find "$docdir" -name '*.rst' -type f -print0 | sort -z)
[ "${#files[@]}" -gt 0 ] || {
	echo "check-rst: no .rst files under $docdir" >&2
	exit 2
}

exec python3 - "$docdir" "${files[@]}" <<'PY'
import io
import os
import sys

import docutils.core
import docutils.nodes
import docutils.utils
from docutils.parsers.rst import Directive, directives, roles

SPDX = ".. SPDX-License-Identifier: "
docdir = os.path.abspath(sys.argv[1])
current = {"path": None}


def anything(arg):
    return arg


class Toctree(Directive):
    """Sphinx toctree: check that each entry names an existing document."""

    has_content = True
    option_spec = {
        "maxdepth": directives.nonnegative_int,
        "caption": directives.unchanged,
        "name": directives.unchanged,
        "hidden": directives.flag,
        "includehidden": directives.flag,
        "numbered": anything,
        "titlesonly": directives.flag,
        "glob": directives.flag,
        "reversed": directives.flag,
    }

    def run(self):
        if "glob" in self.options:
            return []
        here = os.path.dirname(current["path"])
        for line in self.content:
            entry = line.strip()
            if not entry or entry == "self":
                continue
            if entry.endswith(">") and "<" in entry:
                entry = entry[entry.rindex("<") + 1:-1].strip()
            if entry.startswith(("http://", "https://")):
                continue
            if entry.startswith("/"):
                target = os.path.join(docdir, entry.lstrip("/"))
            else:
                target = os.path.join(here, entry)
            if not os.path.isfile(target + ".rst"):
                raise self.error('toctree entry "%s" has no file %s.rst'
                                 % (line.strip(),
                                    os.path.relpath(target, docdir)))
        return []


class NoOp(Directive):
    """Any other Sphinx-only directive: accept and drop it."""

    has_content = True
    optional_arguments = 10
    final_argument_whitespace = True
    option_spec = None  # set per name below

    def run(self):
        return []


def noop_directive(opts):
    spec = dict.fromkeys(opts, anything)
    return type("NoOp", (NoOp,), {"option_spec": spec})


def noop_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    return [docutils.nodes.literal(rawtext, text)], []


directives.register_directive("toctree", Toctree)
directives.register_directive("kernel-doc", noop_directive(
    ["doc", "export", "internal", "identifiers", "no-identifiers",
     "functions"]))
for name in ("only", "c:function", "c:struct", "c:union", "c:macro", "c:type",
             "c:enum", "c:var", "c:member", "c:namespace", "highlight"):
    directives.register_directive(name, noop_directive(
        ["linenos", "caption", "name", "emphasize-lines", "dedent"]))
for name in ("ref", "doc", "c:func", "c:type", "c:macro", "c:struct",
             "c:union", "c:enum", "c:member", "c:data", "file", "manpage"):
    roles.register_local_role(name, noop_role)

passed = failed = 0
for path in sys.argv[2:]:
    rel = os.path.relpath(path, os.path.dirname(docdir))
    reason = None
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if not text.startswith(SPDX):
            reason = "first line is not '%s...'" % SPDX
        else:
            current["path"] = os.path.abspath(path)
            stream = io.StringIO()
            docutils.core.publish_doctree(
                text, source_path=path,
                settings_overrides={
                    "report_level": 2,      # report warnings and worse
                    "halt_level": 2,        # and stop at the first one
                    "warning_stream": stream,
                    "input_encoding": "utf-8",
                    "file_insertion_enabled": True,
                    "raw_enabled": False,
                    "_disable_config": True,
                })
            if stream.getvalue().strip():
                reason = stream.getvalue().strip().splitlines()[0]
    except docutils.utils.SystemMessage as e:
        reason = " ".join(str(e).split())
    except Exception as e:  # unreadable file, bad encoding, docutils bug
        reason = "%s: %s" % (type(e).__name__, " ".join(str(e).split()))
    if reason is None:
        passed += 1
        print("ok %s" % rel)
    else:
        failed += 1
        print("not ok %s: %s" % (rel, reason))

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PY
