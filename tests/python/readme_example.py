#!/usr/bin/env python3
"""Runs README.md's "rockdoc from Python" example (its ```python block) with
the installed package, in a scratch directory, and checks what it prints;
and that the section's install commands are the offline ones the install
check uses (--system-site-packages, --no-build-isolation).

    readme_example.py README.md      (with the venv's python: CTest's
                                       python_readme_example)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    start = text.index("## rockdoc from Python\n")
    end = text.index("\n## ", start + 1)
    section = text[start:end]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "expected one python block, found %d" % len(blocks)
    shell = "".join(re.findall(r"```sh\n(.*?)```", section, re.S))
    for flag in ("--system-site-packages", "--no-build-isolation", "pip install"):
        assert flag in shell, "the install commands lack %s" % flag
    scratch = tempfile.mkdtemp(prefix="rockdoc-readme-")
    try:
        with open(os.path.join(scratch, "example.py"), "w") as f:
            f.write(blocks[0])
        done = subprocess.run([sys.executable, "example.py"], cwd=scratch, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        assert lines[:2] == ["{'sku': 'ink'}", "{'sku': 'pen'}"], lines
        assert lines[2:] == ["4", "[{'_id': None, 'units': 14}]", "duplicate 11000"], lines
        assert os.path.isdir(os.path.join(scratch, "shop-data")), "no database directory"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("README's Python example ran and printed what it says")


if __name__ == "__main__":
    main()
