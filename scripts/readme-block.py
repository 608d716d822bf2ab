#!/usr/bin/env python3
"""Prints the first (or the Nth) ```LANG block of a README section, for the tests that run README
examples.

usage: readme-block.py README.md "SECTION HEADING PREFIX" LANG [N]
"""
import re
import sys

path, heading, lang = sys.argv[1:4]
nth = int(sys.argv[4]) if len(sys.argv) > 4 else 1
text = open(path, encoding="utf-8").read()
start = text.find("\n## " + heading)
if start < 0:
    sys.exit(f"readme-block: no section '## {heading}' in {path}")
end = text.find("\n## ", start + 1)
section = text[start:end if end >= 0 else len(text)]
blocks = re.findall(r"```" + re.escape(lang) + r"\n(.*?)```", section, re.S)
if len(blocks) < nth:
    sys.exit(f"readme-block: no ```{lang} block number {nth} in '## {heading}'")
sys.stdout.write(blocks[nth - 1])
