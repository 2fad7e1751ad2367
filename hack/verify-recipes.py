#!/usr/bin/env python3
"""Check a MicroShift tree's asset recipes the way MicroShift's `make verify-assets` does.

Run from (or pass) the root of a MicroShift checkout. Every file under assets/ must be named
by an entry of scripts/auto-rebase/assets*.yaml (ignored entries count), every entry must
name an existing file, and no directory may list a file twice. Exit 0 when the tree passes,
1 with the problems on stdout otherwise. Needs PyYAML (python3-yaml).
"""

import os
import sys

import yaml

# lvms_assets.yaml is the LVMS recipe of 4.14-4.17 branches (assets_lvms.yaml from 4.18).
RECIPES = ("assets.yaml", "assets_lvms.yaml", "lvms_assets.yaml", "assets_ossm.yaml")


def entries(node, parent, out, dupes):
    """Collect 'assets/'-relative paths named by a dir entry and its nested dirs."""
    base = os.path.normpath(os.path.join(parent, node["dir"]))
    seen = set()
    for f in node.get("files") or []:
        if f["file"] in seen:
            dupes.append(os.path.join(base, f["file"]))
        seen.add(f["file"])
        out.add(os.path.join(base, f["file"]))
    for sub in node.get("dirs") or []:
        entries(sub, base, out, dupes)


def main(root):
    assets = os.path.join(root, "assets")
    if not os.path.isdir(assets):
        print(f"ERROR: {root} has no assets/ directory")
        return 1
    listed, dupes = set(), []
    for name in RECIPES:
        path = os.path.join(root, "scripts", "auto-rebase", name)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh) or {}
        for node in doc.get("assets") or []:
            if "dir" in node:
                entries(node, "", listed, dupes)
            else:
                listed.add(os.path.normpath(node["file"]))
    present = set()
    for dirpath, _, files in os.walk(assets):
        for f in files:
            present.add(os.path.relpath(os.path.join(dirpath, f), assets))
    problems = [f"in no recipe: assets/{p}" for p in sorted(present - listed)]
    problems += [f"listed but missing: assets/{p}" for p in sorted(listed - present)]
    problems += [f"listed twice: assets/{p}" for p in sorted(dupes)]
    for p in problems:
        print("ERROR: " + p)
    print("FAILURE" if problems else "SUCCESS")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
