"""regression_gate on recorded nights (issue 27). fixtures/nights/night_1..8 are real no-change nights
of torchbench resnet18, dcgan, squeezenet1_1 and alexnet x eager, torchscript (batch 2, 8 repeats,
--verify) run on the 2-core build machine while other builds ran on it; night_9 and night_10 are the
same matrix with resnet18 and alexnet run under OMP_NUM_THREADS=1 taskset -c 0 (the issue's planted
slowdown; under that night's load it made them faster, see planted_slowdown_runner.sh).
Only results.jsonl and run_context.json of each night are kept.

Replayed through import + check as a nightly job would see them: no control night may fail the gate;
the planted nights may not fail it on an untouched model; the planted models are caught by the
interleaved A/B confirmation (the baseline build against 'tonight's build', played by
planted_slowdown_runner.sh) and the same confirmation between two equal builds stays quiet. Accuracy
drift, PASS -> FAIL, missing configs, the hook, the history listing and the exit codes are checked on
copies of the recorded nights."""
import json
import os
import shutil
import unittest

from harness import OutputDirTest, run

GATE = os.environ.get("REGRESSION_GATE", "../../build/regression_gate")
EXPERIMENT_RUNNER = os.environ.get("EXPERIMENT_RUNNER", "../../build/experiment_runner")
HERE = os.path.dirname(os.path.abspath(__file__))
NIGHTS = os.path.join(HERE, "fixtures", "nights")
PLANTED_RUNNER = os.path.join(HERE, "planted_slowdown_runner.sh")
CONTROL = [f"night_{k}" for k in range(1, 9)]
PLANTED = ["night_9", "night_10"]
PLANTED_MODELS = {"resnet18", "alexnet"}
REGRESSIONS = {"SLOWER", "BROKEN", "ACCURACY_DRIFT"}


def night(name):
    return os.path.join(NIGHTS, name)


def model_of(config):
    return config.split("/")[1]


class RegressionGateTest(OutputDirTest):
    def setUp(self):
        super().setUp()
        self.db = os.path.join(self.out, "nights.sqlite")
        self.verdict = os.path.join(self.out, "verdict.json")

    def gate(self, *args, expect=None, timeout=600):
        proc = run(GATE, *args, check=False, timeout=timeout)
        if expect is not None:
            self.assertEqual(proc.returncode, expect, f"regression_gate {' '.join(args)}\n"
                             f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-5000:]}")
        return proc

    def check(self, tonight, *args, expect=None, timeout=600):
        proc = self.gate("check", "--db", self.db, tonight, "--verdict-json", self.verdict, *args,
                         expect=expect, timeout=timeout)
        with open(self.verdict, encoding="utf-8") as f:
            verdict = json.load(f)
        self.assertEqual(verdict["exit_status"], proc.returncode)
        return proc, verdict

    def import_nights(self, *names):
        self.gate("import", "--db", self.db, *[night(n) for n in names], expect=0)

    def copy_night(self, name, edit):
        """A copy of a recorded night whose records pass through edit(record) -> record or None."""
        target = os.path.join(self.out, f"{name}_edited")
        os.makedirs(target)
        shutil.copy(os.path.join(night(name), "run_context.json"), target)
        with open(os.path.join(night(name), "results.jsonl"), encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
        with open(os.path.join(target, "results.jsonl"), "w", encoding="utf-8") as f:
            for r in records:
                r = edit(r)
                if r is not None:
                    f.write(json.dumps(r) + "\n")
        return target

    def test_control_nights_never_fail_the_gate(self):
        # Every night against the nights before it, as the nightly job meets them.
        self.import_nights(CONTROL[0])
        for name in CONTROL[1:]:
            proc, verdict = self.check(night(name))
            failing = [c["config"] for c in verdict["configs"] if c["regression"]]
            self.assertEqual(failing, [], f"{name}:\n{proc.stdout}")
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            self.assertEqual(len(verdict["configs"]), 8)
            self.import_nights(name)

    def test_planted_nights_fail_no_untouched_model(self):
        self.import_nights(*CONTROL)
        for name in PLANTED:
            proc, verdict = self.check(night(name))
            for c in verdict["configs"]:
                if model_of(c["config"]) not in PLANTED_MODELS:
                    self.assertFalse(c["regression"], f"{name}: {c}\n{proc.stdout}")

    @unittest.skipUnless(os.path.exists(EXPERIMENT_RUNNER), "needs experiment_runner")
    def test_interleaved_confirmation_catches_exactly_the_planted_models(self):
        self.import_nights(*CONTROL)
        env_runner = os.path.abspath(EXPERIMENT_RUNNER)
        os.environ["EXPERIMENT_RUNNER"] = env_runner  # planted_slowdown_runner.sh runs it
        proc, verdict = self.check(night("night_9"), "--confirm", "--baseline-runner", env_runner,
                                   "--runner", PLANTED_RUNNER, timeout=900)
        failing = {c["config"] for c in verdict["configs"] if c["regression"]}
        planted = {c["config"] for c in verdict["configs"]
                   if model_of(c["config"]) in PLANTED_MODELS}
        self.assertEqual(failing, planted, proc.stdout + proc.stderr[-3000:])
        self.assertEqual(proc.returncode, 1)
        for c in verdict["configs"]:
            if c["config"] in failing:
                self.assertIn("SLOWER in every round", c["confirmation"])
                self.assertIn("--model-config=", c["reproduce"])

    @unittest.skipUnless(os.path.exists(EXPERIMENT_RUNNER), "needs experiment_runner")
    def test_interleaved_confirmation_of_equal_builds_stays_quiet(self):
        self.import_nights(*CONTROL[:-1])
        runner = os.path.abspath(EXPERIMENT_RUNNER)
        proc, verdict = self.check(night(CONTROL[-1]), "--confirm", "--baseline-runner", runner,
                                   "--runner", runner, timeout=900)
        failing = [c["config"] for c in verdict["configs"] if c["regression"]]
        self.assertEqual(failing, [], proc.stdout + proc.stderr[-3000:])
        self.assertEqual(proc.returncode, 0)

    def test_accuracy_drift_and_pass_to_fail_are_regressions(self):
        self.import_nights(*CONTROL[:-1])

        def drift(r):
            if r["model"]["model_name"] == "squeezenet1_1" and r["experiment"]["dynamo"] is None:
                r["verification"]["rmse_vs_fp64"] *= 10  # PASS -> PASS, error 10x
            if r["model"]["model_name"] == "dcgan" and r["experiment"]["dynamo"] == "torchscript":
                r["verification_code"] = "FAIL"
            return r

        proc, verdict = self.check(self.copy_night(CONTROL[-1], drift), expect=1)
        by = {c["config"]: c for c in verdict["configs"]}
        eager = "torchbench/squeezenet1_1/eval/eager/bs2/cpu:AMD EPYC"
        self.assertEqual(by[eager]["verdict"], "ACCURACY_DRIFT", proc.stdout)
        self.assertIn("rmse_vs_fp64", by[eager]["reason"])
        fail = "torchbench/dcgan/eval/torchscript/bs2/cpu:AMD EPYC"
        self.assertEqual(by[fail]["verdict"], "BROKEN")
        self.assertEqual(by[fail]["reason"], "verification PASS -> FAIL")
        self.assertEqual({c["config"] for c in verdict["configs"] if c["regression"]}, {eager, fail})

    def test_missing_config_exits_2_and_is_named(self):
        self.import_nights(*CONTROL[:-1])
        gone = lambda r: None if r["model"]["model_name"] == "alexnet" else r  # noqa: E731
        proc, verdict = self.check(self.copy_night(CONTROL[-1], gone), expect=2)
        missing = sorted(c["config"] for c in verdict["configs"] if c["verdict"] == "MISSING")
        self.assertEqual(missing, ["torchbench/alexnet/eval/eager/bs2/cpu:AMD EPYC",
                                   "torchbench/alexnet/eval/torchscript/bs2/cpu:AMD EPYC"])
        for config in missing:
            self.assertIn(f"{config} is missing tonight", proc.stderr)

    def test_on_regression_hook_gets_the_verdict_path(self):
        self.import_nights(*CONTROL[:-1])
        broken = self.copy_night(CONTROL[-1], lambda r: {**r, "metrics": {"error": "RuntimeError: x"}}
                                 if r["model"]["model_name"] == "dcgan" else r)
        seen = os.path.join(self.out, "hook_saw")
        self.gate("check", "--db", self.db, broken, "--on-regression",
                  f"cp -- \"$1\" {seen}; true", expect=1)
        with open(seen, encoding="utf-8") as f:
            verdict = json.load(f)
        self.assertEqual(sorted(c["config"] for c in verdict["configs"] if c["verdict"] == "BROKEN"),
                         ["torchbench/dcgan/eval/eager/bs2/cpu:AMD EPYC",
                          "torchbench/dcgan/eval/torchscript/bs2/cpu:AMD EPYC"])

    def test_import_is_idempotent_and_history_lists_nights(self):
        self.import_nights(*CONTROL[:3])
        again = self.gate("import", "--db", self.db, night(CONTROL[0]), expect=0)
        self.assertIn("already imported as night 1", again.stdout)
        listing = self.gate("history", "--db", self.db, expect=0).stdout.splitlines()
        self.assertEqual(len(listing), 3)
        rows = self.gate("history", "--db", self.db, "--config", "alexnet/eval/eager",
                         expect=0).stdout.splitlines()
        self.assertEqual(len(rows), 3)
        self.assertTrue(all("PASS" in r and " ms [" in r for r in rows), rows)

    def test_exit_codes(self):
        # Nothing to compare: an empty history.
        self.gate("import", "--db", self.db, expect=3)  # no directory
        proc = self.gate("check", "--db", os.path.join(self.out, "none.sqlite"), night("night_2"),
                         expect=3)
        self.assertIn("no history database", proc.stderr)
        self.import_nights("night_2")
        proc = self.gate("check", "--db", self.db, night("night_1"), expect=2)  # night_1 is older
        self.assertIn("nothing to compare", proc.stderr)
        self.gate("check", "--db", self.db, "--baseline", night("night_1"), night("night_2"),
                  expect=3)  # either a history or one night
        self.gate("check", "--db", self.db, self.out, expect=3)  # no results.jsonl
        self.gate("frobnicate", expect=3)
        self.assertIn("import", self.gate("--help", expect=0).stdout)
        self.assertIn("--confirm", self.gate("check", "--help", expect=0).stdout)


if __name__ == "__main__":
    unittest.main()
