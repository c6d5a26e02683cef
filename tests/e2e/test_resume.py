"""Resume, corrupt lines, Python-written files, --retry-failed, --rerun, Ctrl-C and the results-file
lock."""
import json
import os
import signal
import subprocess
import time
import unittest

from harness import FAULTY_RUNNER, RUNNER, OutputDirTest, read_records, run

DUMMY = ["--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=None", "--repeat=1"]


class ResumeTest(OutputDirTest):
    def test_rerun_skips_finished_configs_and_tolerates_a_corrupt_line(self):
        run(RUNNER, *DUMMY, "--test=eval", f"--output-dirname={self.out}")
        with open(self.results, "a", encoding="utf-8") as f:
            f.write('{"model": {"suite_name": "dummy", "model_na')  # a line cut off mid-record
        proc = run(RUNNER, *DUMMY, "--test=eval", "--test=train", f"--output-dirname={self.out}")
        self.assertIn("SKIP already completed benchmark", proc.stderr)
        self.assertIn("Ignoring corrupt line 2", proc.stderr)
        with open(self.results, encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), 3)  # eval, the corrupt fragment, train on its own line
        self.assertEqual(json.loads(lines[2])["experiment"]["test"], "train")
        proc = run(RUNNER, *DUMMY, "--test=eval", "--test=train", f"--output-dirname={self.out}")
        self.assertEqual(proc.stderr.count("SKIP already completed benchmark"), 2)
        self.assertEqual(len(read_records_lenient(self.results)), 2)

    def test_a_resumed_sweep_keeps_the_earlier_commands_in_run_context(self):
        context_path = os.path.join(self.out, "run_context.json")
        run(RUNNER, *DUMMY, "--test=eval", f"--output-dirname={self.out}")
        with open(context_path) as f:
            first = json.load(f)
        self.assertNotIn("earlier_sweeps", first)
        run(RUNNER, *DUMMY, "--test=eval", "--test=train", f"--output-dirname={self.out}")
        with open(context_path) as f:
            second = json.load(f)
        self.assertIn("--test=train", second["command"])
        self.assertEqual(second["earlier_sweeps"],
                         [{k: first[k] for k in ("command", "started", "hostname")}])
        run(RUNNER, *DUMMY, "--test=eval", "--no-resume", f"--output-dirname={self.out}")
        with open(context_path) as f:
            self.assertNotIn("earlier_sweeps", json.load(f))  # a fresh file has no history

    def test_a_record_written_by_the_python_runner_counts_as_done(self):
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
        record = {"model": {"suite_name": "dummy", "model_name": "dummy"},
                  "experiment": {"accelerator": "cpu", "accelerator_model": cpu, "xla": None,
                                 "xla_flags": None, "dynamo": None, "torch_xla2": None,
                                 "keep_model_data_on_cuda": False, "test": "eval", "batch_size": 16,
                                 "enable_functionalization": False},
                  "repeat": 10, "iterations_per_run": 1, "metrics": {"total_time": [0.1]},
                  "timestamp": 1.0, "verification_code": "VERIFIER_SKIPPED"}
        with open(self.results, "w", encoding="utf-8") as f:
            json.dump(record, f, ensure_ascii=False)
            f.write("\n")
        proc = run(RUNNER, *DUMMY, "--test=eval", f"--output-dirname={self.out}")
        self.assertIn("SKIP already completed benchmark", proc.stderr)
        self.assertEqual(len(read_records(self.results)), 1)
        run(RUNNER, *DUMMY, "--test=eval", "--no-resume", f"--output-dirname={self.out}")
        records = read_records(self.results)
        self.assertEqual(len(records), 1)
        self.assertNotEqual(records[0]["timestamp"], 1.0)

    def test_retry_failed_reruns_errors_and_keeps_the_old_record_aside(self):
        args = ["--suite-name=faulty", "-k", "throw_error|a_healthy", "--accelerator=cpu", "--xla=None",
                "--dynamo=None", "--test=eval", "--repeat=1", f"--output-dirname={self.out}"]
        run(FAULTY_RUNNER, *args)
        run(FAULTY_RUNNER, *args, "--retry-failed")
        records = read_records(self.results)
        self.assertEqual(sorted(r["model"]["model_name"] for r in records), ["a_healthy", "throw_error"])
        retried = read_records(self.results + ".retried")
        self.assertEqual([r["model"]["model_name"] for r in retried], ["throw_error"])

    def test_retry_failed_keeps_corrupt_lines_where_they_were(self):
        args = ["--suite-name=faulty", "-k", "throw_error", "--accelerator=cpu", "--xla=None",
                "--dynamo=None", "--test=eval", "--repeat=1", f"--output-dirname={self.out}"]
        run(FAULTY_RUNNER, *args)
        truncated = '{"model": {"model_name": "cut_off_by_a_cra'
        with open(self.results, "a") as f:
            f.write(truncated + "\n")
        proc = run(FAULTY_RUNNER, *args, "--retry-failed")
        self.assertIn("Ignoring corrupt line 2", proc.stderr)
        with open(self.results) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], truncated)  # kept for the user, not silently dropped
        self.assertEqual(len(lines), 2)
        self.assertEqual(json.loads(lines[1])["model"]["model_name"], "throw_error")

    def test_rerun_replaces_the_chosen_record_and_keeps_the_old_one_aside(self):
        args = [*DUMMY, "--test=eval", "--test=train", f"--output-dirname={self.out}"]
        run(RUNNER, *args)
        with open(self.results, encoding="utf-8") as f:
            eval_line, train_line = f.read().splitlines()
        self.assertEqual(json.loads(train_line)["experiment"]["test"], "train")
        proc = run(RUNNER, *args, "--rerun=dummy:eager:train")
        self.assertIn("--rerun: 1 record(s) moved to", proc.stderr)
        self.assertEqual(proc.stderr.count("SKIP already completed benchmark"), 1)  # eval only
        with open(self.results, encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), 2)
        self.assertEqual(lines[0], eval_line)  # the other config's record, byte for byte
        self.assertNotEqual(lines[1], train_line)
        self.assertEqual(json.loads(lines[1])["experiment"]["test"], "train")
        with open(self.results + ".retried", encoding="utf-8") as f:
            self.assertEqual(f.read(), train_line + "\n")  # where --retry-failed puts them

    def test_rerun_rejects_a_selector_naming_no_config_and_no_resume(self):
        args = [*DUMMY, "--test=eval", f"--output-dirname={self.out}"]
        run(RUNNER, *args)
        with open(self.results, encoding="utf-8") as f:
            before = f.read()
        for flags, expected in [
                (["--rerun=dummy:eager:train"], "'dummy:eager:train' names no config"),
                (["--rerun=resnet18"], "'resnet18' names no config"),
                (["--rerun=dummy:eager:fast"], "invalid TEST 'fast'"),
                (["--rerun=dummy", "--no-resume"], "--rerun cannot be combined with --no-resume")]:
            proc = run(RUNNER, *args, *flags, check=False)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn(expected, proc.stderr)
        with open(self.results, encoding="utf-8") as f:
            self.assertEqual(f.read(), before)  # nothing touched


def read_records_lenient(path):
    records = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return records


class InterruptTest(OutputDirTest):
    def test_ctrl_c_keeps_finished_records_and_a_rerun_completes_without_duplicates(self):
        args = ["--suite-name=faulty", "-k", "a_healthy|hang_ignoring_sigterm|z_healthy",
                "--accelerator=cpu", "--xla=None", "--dynamo=None", "--test=eval", "--repeat=1",
                "--subprocess-grace-period=0.5", f"--output-dirname={self.out}"]
        parent = subprocess.Popen([FAULTY_RUNNER, *args, "--subprocess-timeout=600"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while time.time() < deadline and not (os.path.exists(self.results) and
                                              os.path.getsize(self.results) > 0):
            time.sleep(0.1)
        time.sleep(1.0)  # the hanging child is running now

        # a second runner on the same results file is refused at once
        second = run(FAULTY_RUNNER, *args, check=False, timeout=60)
        self.assertEqual(second.returncode, 1)
        self.assertIn("another experiment_runner is writing", second.stderr)

        started = time.time()
        parent.send_signal(signal.SIGINT)
        _, stderr = parent.communicate(timeout=60)
        self.assertEqual(parent.returncode, 130, stderr[-3000:])
        self.assertLess(time.time() - started, 20)
        self.assertIn("Interrupted: stopped hang_ignoring_sigterm", stderr)
        self.assertEqual([r["model"]["model_name"] for r in read_records(self.results)], ["a_healthy"])

        proc = run(FAULTY_RUNNER, *args, "--subprocess-timeout=2")
        self.assertIn("SKIP already completed benchmark", proc.stderr)
        names = [r["model"]["model_name"] for r in read_records(self.results)]
        self.assertEqual(names, ["a_healthy", "hang_ignoring_sigterm", "z_healthy"])


if __name__ == "__main__":
    unittest.main()
