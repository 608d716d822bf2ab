"""The example in Bindings/python/README.md runs as written, against the mock."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, child_env

README = ROOT / "Bindings" / "python" / "README.md"


def readme_example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "README.md has no ```python block"
    return blocks[0]


def test_the_readme_example_runs(mock, pki, tmp_path: Path) -> None:
    # The example reads its key from the working directory and the server from APNS_* variables.
    shutil.copy(pki / "AuthKey_TESTKEY001.p8", tmp_path / "AuthKey_TESTKEY001.p8")
    env = child_env(APNS_HOST="localhost", APNS_PORT=str(mock.port), APNS_CA_FILE=str(pki / "ca.pem"))
    run = subprocess.run([sys.executable, "-c", readme_example()], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["1", "ACCEPTED", "200"], run.stdout


def test_the_top_level_readme_shows_this_same_example() -> None:
    top = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert top and top[0] == readme_example(), "README.md's Python example differs from Bindings/python/README.md's"


def readme_block(path: Path, section: str, nth: int = 1) -> str:
    """The nth ```python block of a README section (scripts/readme-block.py)."""
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "readme-block.py"), str(path), section, "python",
                           str(nth)], check=True, capture_output=True, text=True).stdout


def test_the_readme_asyncio_example_runs(mock, pki, tmp_path: Path) -> None:
    example = readme_block(README, "asyncio")
    assert readme_block(ROOT / "README.md", "Python", 2) == example, \
        "README.md's asyncio example differs from Bindings/python/README.md's"
    shutil.copy(pki / "AuthKey_TESTKEY001.p8", tmp_path / "AuthKey_TESTKEY001.p8")
    env = child_env(APNS_HOST="localhost", APNS_PORT=str(mock.port), APNS_CA_FILE=str(pki / "ca.pem"))
    run = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["1 ACCEPTED 200", "10 11 12"], run.stdout
