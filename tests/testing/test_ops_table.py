"""docs/ops.md is generated from the op database and must be up to date."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_ops_table_is_up_to_date():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_ops_table.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, (
        "docs/ops.md is stale: run `python scripts/gen_ops_table.py`\n" + proc.stderr)


def test_check_mode_detects_a_stale_table(tmp_path):
    stale = tmp_path / "ops.md"
    stale.write_text("# Op coverage\n\nold\n")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_ops_table.py"), "--check",
                           "--output", str(stale)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "stale" in proc.stderr
    assert stale.read_text() == "# Op coverage\n\nold\n"  # check mode never writes


def test_table_lists_every_op_and_every_expected_failure():
    from plugrad.testing import opdb
    text = (ROOT / "docs" / "ops.md").read_text()
    for op in opdb.OP_DB:
        assert f"| `{op.name}` |" in text, op.name
    for op in opdb.OP_DB:
        for (test, _, _), reason in op.xfails.items():
            if test != "test_unsupported_dtype":  # the table lists supported dtypes only
                assert reason in text, reason
