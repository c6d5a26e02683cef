"""bench/any_model_coverage.py table: the merged coverage table of several GPU calls, whose share
lines are what issue 25's criteria are read from (every runnable model run in all three columns,
>= 90% of the buildable models of each list run). Run through the script's own command line on
small coverage files written here; no GPU, no torch."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "bench", "any_model_coverage.py")
COLUMNS = ("eager_eval", "eager_train", "inductor_eval")


def row(model, buildable, cells, note=""):
    """One summarize line of the huggingface suite: cells maps a column to its cell."""
    line = {"suite": "huggingface", "model": model, "buildable": buildable, "build_note": note}
    line.update({c: cells.get(c, {"status": "NOT_ASKED"}) for c in COLUMNS})
    return line


def passed(ms):
    return {"status": "PASS", "per_iter_ms": ms}


SKIP_OLD = {"status": "SKIP", "reason": "skip.all: fails with even batch size = 1 (there)"}


class CoverageTableTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.configs = os.path.join(self.dir.name, "configs")
        os.makedirs(self.configs)
        with open(os.path.join(self.configs, "huggingface_models_list.txt"), "w") as f:
            f.write("Alpha,8\nBeta,8\nNeo,8\nHub,8\nBig,8\n")
        # Neo was skipped when the older calls ran and is no longer; Big still is.
        with open(os.path.join(self.configs, "huggingface.yaml"), "w") as f:
            f.write(textwrap.dedent("""\
                skip:
                  all:
                    # too large for the machine's disk
                    - Big
                """))

    def write(self, name, rows):
        import json
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        return path

    def table(self, *paths):
        out = subprocess.run([sys.executable, SCRIPT, "table", f"--config-dir={self.configs}",
                              *paths], capture_output=True, text=True, check=True).stdout
        return out

    def test_merged_calls_count_the_buildable_models_and_the_stale_skips(self):
        every = {c: passed(2.0) for c in COLUMNS}
        first = self.write("first.jsonl", [
            row("Alpha", True, every),
            row("Beta", True, {"eager_eval": passed(1.0), "eager_train": passed(3.0)}),
            row("Neo", True, {c: SKIP_OLD for c in COLUMNS}),
            row("Hub", False, {}, note="Hub: its config is the hub's (a download)"),
            row("Big", True, {c: {"status": "SKIP", "reason": "skip.all: too large"}
                              for c in COLUMNS}),
        ])
        # A later call that ran Beta's inductor column, and whose prefetch did not see Hub.
        later = self.write("later.jsonl", [
            row("Beta", True, {"inductor_eval": passed(0.5)}),
            row("Hub", None, {}),
        ])
        out = self.table(first, later)
        lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
        # Beta: both calls' cells, cell by cell
        self.assertRegex(lines["Beta"], r"PASS 1\.00 ms\s+PASS 3\.00 ms\s+PASS 0\.50 ms")
        # Neo: the YAML skips it no longer, so the older SKIP is a gap, not a reason
        self.assertNotIn("SKIP", lines["Neo"])
        self.assertIn("NOT_RUN", lines["Neo"])
        # Hub: the later call's unknown buildability does not undo the earlier answer
        self.assertIn("Hub: not buildable offline", out)
        share = next(line for line in out.splitlines() if line.strip().startswith("huggingface"))
        # buildable: Alpha, Beta, Neo, Big; skipped: Big; runs: Alpha and Beta (Neo not run)
        self.assertIn("buildable 4,", share)
        self.assertIn("skipped 1,", share)
        self.assertIn("runs 2/3 (67%) of those not skipped, 2/4 (50%) of the buildable", share)
        self.assertIn("3 configs not run", share)

    def test_an_unchecked_model_is_said_so(self):
        out = self.table(self.write("only.jsonl", [row("Alpha", None, {"eager_eval": passed(1.0)})]))
        self.assertIn("(1 not checked: no prefetch chose them)", out)


if __name__ == "__main__":
    unittest.main()
