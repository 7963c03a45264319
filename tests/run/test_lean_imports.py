"""A run that calls no provider never loads litellm (2.5 s and about 170 MB per runner process)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_an_oracle_run_never_imports_litellm(tmp_path: Path):
    script = (
        "import sys\n"
        "from harness.cli.main import main\n"
        f"code = main(['--model', 'oracle', '--domain', 'demo', '--results-dir', {str(tmp_path)!r}, '--run-id', 'r'])\n"
        "print(code, 'litellm' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-2:] == ["0", "False"]
    assert (tmp_path / "r" / "results.jsonl").read_text().count("\n") > 0
