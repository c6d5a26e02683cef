"""Healthy sweeps with the real binary and real LibTorch on the CPU: records, format, SKIPs."""
import json
import os
import unittest

from harness import RUNNER, SHARED_CACHE, OutputDirTest, read_records, run

EXPERIMENT_KEYS = ["accelerator", "accelerator_model", "xla", "xla_flags", "dynamo", "torch_xla2",
                   "keep_model_data_on_cuda", "test", "batch_size", "enable_functionalization"]
RECORD_KEYS = ["model", "experiment", "repeat", "iterations_per_run", "metrics", "timestamp",
               "verification_code"]
# after every other top-level key of a timed record (issue 24)
MACHINE_KEYS = ["machine_state", "noise"]
HOST_KEYS = ["load_average_1m", "load_average_5m", "load_average_15m", "online_cpus", "affinity_cpus",
             "omp_num_threads",
             "cpu_ticks", "process_cpu_s", "speed_probe_ms"]


def cpu_model_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.split(":")[0].strip() == "model name":
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


class DummySweepTest(OutputDirTest):
    def test_dummy_eval_and_train_give_one_timed_record_each(self):
        proc = run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=None",
                   "--test=eval", "--test=train", "--repeat=3", "--iterations-per-run=2",
                   "--timestamp=1700000000.25", f"--output-dirname={self.out}")
        with open(self.results, encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), 2)
        for line in lines:
            # byte-identical to Python's json.dump of the same object
            self.assertEqual(json.dumps(json.loads(line), ensure_ascii=False), line)
        records = [json.loads(line) for line in lines]
        for record, test in zip(records, ["eval", "train"]):
            # model_source: where the model came from (here benchmatrix's built-in C++ module);
            # memory: the memory pass's footprint (on by default, worker/memory_pass.hpp)
            self.assertEqual(list(record),
                             RECORD_KEYS + ["model_source", "memory", "run_environment"] +
                             MACHINE_KEYS)
            self.assertEqual(record["model_source"]["kind"], "built-in")
            self.assertEqual(list(record["experiment"]), EXPERIMENT_KEYS)
            self.assertEqual(record["model"], {"suite_name": "dummy", "model_name": "dummy"})
            self.assertEqual(record["experiment"]["test"], test)
            self.assertEqual(record["experiment"]["batch_size"], 16)
            self.assertEqual(record["experiment"]["accelerator_model"], cpu_model_name())
            self.assertEqual(record["repeat"], 3)
            self.assertEqual(record["iterations_per_run"], 2)
            self.assertEqual(record["timestamp"], 1700000000.25)
            self.assertEqual(record["verification_code"], "VERIFIER_SKIPPED")
            metrics = record["metrics"]
            self.assertEqual(list(metrics), ["total_time", "per_iter_time", "peak_host_rss_bytes"])
            self.assertEqual(len(metrics["total_time"]), 3)
            self.assertEqual(len(metrics["peak_host_rss_bytes"]), 3)
            for total, per_iter in zip(metrics["total_time"], metrics["per_iter_time"]):
                self.assertGreater(total, 0)
                self.assertAlmostEqual(per_iter, total / 2)
            # On the CPU the memory key has the host's figures only: no device figures, so no
            # CUDA graph capture peak (device.capture_peak_allocated_bytes) either, and it says why.
            memory = record["memory"]
            self.assertEqual(list(memory), ["parameters_bytes", "buffers_bytes"]
                             + (["optimizer_state_bytes"] if test == "train" else [])
                             + ["device", "how_seen", "host_rss"])
            self.assertEqual(memory["device"], {"unavailable": "accelerator is cpu"})
            self.assertTrue(memory["how_seen"].startswith("the accelerator is the CPU: host peak "
                                                          "RSS only"), memory["how_seen"])
        self.assertIn("per-iter median ms", proc.stdout)  # the summary table
        # the sweep's context for html_report: command, versions, host
        with open(os.path.join(self.out, "run_context.json"), encoding="utf-8") as f:
            context = json.load(f)
        self.assertEqual(list(context), ["command", "torch_version", "cuda_version", "hostname", "cpu_model",
                                         "gpus", "started", "benchmatrix_revision", "run_environment",
                                         "machine_state"])
        self.assertEqual(list(context["machine_state"]["host"]), HOST_KEYS)
        self.assertGreaterEqual(context["machine_state"]["host"]["online_cpus"], 1)
        self.assertGreaterEqual(len(context["machine_state"]["gpus"]), 1)  # or why there are none
        self.assertIn("--suite-name=dummy", context["command"])
        import torch  # the wheel LibTorch comes from
        self.assertEqual(context["torch_version"], torch.__version__.split("+")[0])
        self.assertEqual(context["cpu_model"], cpu_model_name())
        self.assertGreater(context["started"], 1.7e9)

    def test_records_and_run_context_carry_the_threads_affinity_and_torch_build(self):
        # As a user pins a night: taskset -c 0 with OMP_NUM_THREADS=1. The children inherit both.
        env = dict(os.environ, OMP_NUM_THREADS="1")
        env.pop("MKL_NUM_THREADS", None)
        run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=None",
            "--test=eval", "--repeat=1", f"--output-dirname={self.out}", env=env,
            preexec_fn=lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}))
        import torch  # the wheel LibTorch comes from
        expected = {"torch": {"version": torch.__version__.split("+")[0], "build": torch.__version__,
                              "git_revision": torch.version.git_version, "cuda": torch.version.cuda},
                    "threads": {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": None, "intra_op": 1},
                    "cpu_affinity": str(min(os.sched_getaffinity(0)))}
        [record] = read_records(self.results)
        with open(os.path.join(self.out, "run_context.json"), encoding="utf-8") as f:
            context = json.load(f)
        for environment in (record["run_environment"], context["run_environment"]):
            self.assertGreaterEqual(environment["threads"].pop("inter_op"), 1)
            self.assertEqual(environment, expected)
        revision = context["benchmatrix_revision"]  # git describe of this checkout, or "unknown"
        self.assertRegex(revision, r"^([0-9a-f]{7,}(-dirty)?|.+-g[0-9a-f]{7,}(-dirty)?|unknown)$")
    def test_a_cpu_record_carries_the_machine_state_and_a_noise_verdict(self):
        run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=None",
            "--test=eval", "--batch-size=1", "--repeat=2", f"--output-dirname={self.out}",
            env={**os.environ, "OMP_NUM_THREADS": "1"})
        [record] = read_records(self.results)
        state = record["machine_state"]
        self.assertEqual(list(state), ["start", "end"])
        for when in ("start", "end"):
            snapshot = state[when]
            self.assertEqual(list(snapshot), ["taken_at", "host", "gpu"])
            host = snapshot["host"]
            self.assertEqual(list(host), HOST_KEYS)
            self.assertEqual(host["online_cpus"], os.cpu_count())
            self.assertEqual(host["affinity_cpus"], len(os.sched_getaffinity(0)))
            self.assertEqual(host["omp_num_threads"], "1")
            for load in HOST_KEYS[:3]:
                self.assertGreaterEqual(host[load], 0)
            self.assertEqual(snapshot["gpu"], {"unavailable": "accelerator is cpu"})
        self.assertLessEqual(state["start"]["taken_at"], state["end"]["taken_at"])
        # Repeat 0 is warm-up: one counted repeat gives no spread to judge. The host load is judged
        # all the same: above the online CPUs (this shared build machine at times) it is noisy.
        noise = record["noise"]
        self.assertEqual(list(noise), ["verdict", "reasons"])
        self.assertIn("only 1 counted repeat(s) of per_iter_time: at least 3 are needed to judge their "
                      "spread", noise["reasons"])
        load = max(state[w]["host"]["load_average_1m"] for w in ("start", "end"))
        overloaded = load > state["start"]["host"]["online_cpus"]
        self.assertEqual(noise["verdict"], "noisy" if overloaded else "unknown", noise)
        self.assertEqual(any(r.startswith("host load average") for r in noise["reasons"]), overloaded)

    def test_configs_that_cannot_run_here_get_skip_records(self):
        # default axes: cpu/cuda/tpu x None/PJRT/XRT x None/inductor/openxla x eval/train
        run(RUNNER, "--suite-name=dummy", "--repeat=1", "--test=eval", f"--output-dirname={self.out}",
            f"--cache-dir={SHARED_CACHE}")
        records = read_records(self.results)
        by_config = {(r["experiment"]["accelerator"], r["experiment"]["xla"], r["experiment"]["dynamo"]):
                     r for r in records}
        self.assertEqual(len(by_config), len(records))  # never duplicated
        # valid combinations: cpu {None,inductor}+None, PJRT {None,openxla}; cuda the same; tpu PJRT/XRT x
        # {None, openxla} = 4 + 4 + 4
        self.assertEqual(len(records), 12)
        eager_cpu = by_config[("cpu", None, None)]
        self.assertIn("total_time", eager_cpu["metrics"])
        inductor = by_config[("cpu", None, "inductor")]  # AOTInductor on the CPU
        self.assertIn("compile_time_s", inductor["metrics"])
        openxla = by_config[("cpu", "PJRT", "openxla")]
        self.assertTrue(openxla["metrics"]["error"].startswith("SKIP: xla=PJRT is not available"))
        self.assertEqual(openxla["verification_code"], "VERIFIER_SKIPPED")
        tpu = by_config[("tpu", "PJRT", None)]
        self.assertTrue(tpu["metrics"]["error"].startswith("SKIP:"))
        if not os.path.exists("/dev/nvidia0"):
            cuda = by_config[("cuda", None, None)]
            self.assertIn("no CUDA GPU is visible", cuda["metrics"]["error"])

    def test_child_runs_by_hand_and_appends_its_record(self):
        run(RUNNER, "--suite-name=dummy", "--repeat=2", f"--output-dirname={self.out}",
            '--experiment-config={"accelerator": "cpu", "xla": null, "xla_flags": null, "dynamo": null, '
            '"torch_xla2": null, "test": "eval", "keep_model_data_on_cuda": false, '
            '"enable_functionalization": false}', '--model-config={"model_name": "dummy"}')
        records = read_records(self.results)
        self.assertEqual(len(records), 1)
        self.assertEqual(len(records[0]["metrics"]["total_time"]), 2)

    def test_the_printed_run_line_reruns_the_config_the_sweep_ran(self):
        # The sweep's children get a job file; the `Run with ...` flags appended to the sweep's
        # own command must still reproduce the same config by hand (as in the original).
        args = ["--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=torchscript",
                "--test=train", "--repeat=2", f"--output-dirname={self.out}"]
        proc = run(RUNNER, *args)
        run_line = next(l for l in proc.stderr.splitlines() if "Run with --model-config=" in l)
        model_flag, experiment_flag = run_line.split("Run with ", 1)[1].split(" --experiment-config=")
        run(RUNNER, *args, model_flag, "--experiment-config=" + experiment_flag)
        swept, by_hand = read_records(self.results)
        for key in ["model", "experiment", "repeat", "iterations_per_run", "verification_code"]:
            self.assertEqual(swept[key], by_hand[key], key)
        self.assertEqual(sorted(swept["metrics"]), sorted(by_hand["metrics"]))

    def test_save_output_writes_a_torch_loadable_file_per_repeat(self):
        run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=None",
            "--test=eval", "--repeat=2", "--save-output", f"--output-dirname={self.out}")
        for r in range(2):
            path = os.path.join(self.out, "dummy", str(r),
                                "output-cpu-None-False-False-eval-None-None-None-dummy.pt")
            self.assertTrue(os.path.getsize(path) > 0, path)


class TorchbenchSweepTest(OutputDirTest):
    def test_llama_and_resnet50_eval_and_the_training_skip_list(self):
        run(RUNNER, "--suite-name=torchbench", "-k", "^llama$", "-k", "^resnet50$", "--accelerator=cpu",
            "--xla=None", "--dynamo=None", "--test=eval", "--test=train", "--batch-size=1", "--repeat=1",
            f"--output-dirname={self.out}", timeout=900)
        records = read_records(self.results)
        got = {(r["model"]["model_name"], r["experiment"]["test"]): r for r in records}
        self.assertEqual(len(records), 4)
        self.assertEqual(got[("llama", "train")]["metrics"],
                         {"error": "SKIP: model is in skip.test.training of "
                                   + os.path.join(os.environ.get("BENCHMATRIX_CONFIG_DIR", "../../configs"),
                                                  "torchbench.yaml")})
        for key in [("llama", "eval"), ("resnet50", "eval"), ("resnet50", "train")]:
            self.assertIn("total_time", got[key]["metrics"], got[key]["metrics"])
            self.assertEqual(got[key]["experiment"]["batch_size"], 1)


class SeveralSuitesTest(OutputDirTest):
    """--suite-name=a,b: one sweep over several suites, each record naming its suite."""
    TWO_SUITES = ["--suite-name=dummy,torchbench", "--filter=^squeezenet1_1$", "--accelerator=cpu",
                  "--xla=None", "--dynamo=None", "--test=eval", "--batch-size=1", "--repeat=1"]

    def test_two_suites_give_records_of_both_and_a_rerun_resumes_them(self):
        proc = run(RUNNER, *self.TWO_SUITES, f"--output-dirname={self.out}", timeout=900)
        records = read_records(self.results)
        # dummy's one model is never filtered, as when it runs alone
        self.assertEqual([(r["model"]["suite_name"], r["model"]["model_name"]) for r in records],
                         [("dummy", "dummy"), ("torchbench", "squeezenet1_1")])
        for record in records:
            self.assertIn("total_time", record["metrics"], record["metrics"])
        # the `Run with` line names the suite; progress and the summary table show it
        self.assertIn('--model-config={"suite_name": "torchbench", "model_name": "squeezenet1_1"}',
                      proc.stderr)
        self.assertIn("running torchbench/squeezenet1_1", proc.stderr)
        header = proc.stdout.splitlines()[0].split()
        self.assertEqual(header[:2], ["suite", "model"])
        self.assertRegex(proc.stdout, r"\ntorchbench +squeezenet1_1 +eval ")

        # The same command again runs nothing; so does one suite's own sweep: a several-suite
        # sweep writes the records that sweeps of one suite each would.
        with open(self.results, encoding="utf-8") as f:
            before = f.read()
        proc = run(RUNNER, *self.TWO_SUITES, f"--output-dirname={self.out}")
        self.assertEqual(proc.stderr.count("SKIP already completed benchmark"), 2)
        proc = run(RUNNER, *self.TWO_SUITES[1:], "--suite-name=torchbench",
                   f"--output-dirname={self.out}")
        self.assertEqual(proc.stderr.count("SKIP already completed benchmark"), 1)
        self.assertNotIn("suite", proc.stdout.splitlines()[0])  # one suite: the usual table
        with open(self.results, encoding="utf-8") as f:
            self.assertEqual(f.read(), before)

    def test_each_suite_keeps_its_skip_lists(self):
        run(RUNNER, "--suite-name=torchbench,dummy", "--filter=^llama$", "--accelerator=cpu",
            "--xla=None", "--dynamo=None", "--test=train", "--repeat=1",
            f"--output-dirname={self.out}")
        got = {r["model"]["suite_name"]: r for r in read_records(self.results)}
        # torchbench.yaml's skip.test.training names llama; the dummy suite has no such list
        self.assertTrue(got["torchbench"]["metrics"]["error"].startswith(
            "SKIP: model is in skip.test.training of "), got["torchbench"]["metrics"])
        self.assertIn("total_time", got["dummy"]["metrics"], got["dummy"]["metrics"])

    def test_a_bad_name_in_the_list_is_a_usage_error_naming_the_suites(self):
        proc = run(RUNNER, "--suite-name=torchbench,torchbnech", "--dry-run", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("argument --suite-name: invalid choice: 'torchbnech' in "
                      "'torchbench,torchbnech' (choose from 'dummy', ", proc.stderr)
        self.assertIn("'torchbench', or a comma-separated list of them)", proc.stderr)


class ChildStartTest(OutputDirTest):
    """CPU children start as forks of the sweep (runner/child_start.hpp), skipping a second
    LibTorch load, and give the records exec'd children give."""

    def sweep(self, name, **env):
        out = os.path.join(self.out, name)
        proc = run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=None",
                   "--dynamo=torchscript", "--test=eval", "--test=train", "--repeat=2", "--verify",
                   "--log-level=debug", f"--output-dirname={out}",
                   env=dict(os.environ, **env))
        records = {(r["experiment"]["dynamo"], r["experiment"]["test"]): r
                   for r in read_records(os.path.join(out, "results.jsonl"))}
        return proc.stderr, records

    def test_cpu_children_are_forked_and_give_the_records_of_exec_d_children(self):
        forked_log, forked = self.sweep("forked")
        exec_log, execd = self.sweep("exec", BENCHMATRIX_CHILD_START="exec")
        # each of the 4 configs: a timing child and a verifier child
        self.assertEqual(forked_log.count(": child forked"), 8, forked_log)
        self.assertEqual(exec_log.count(": child exec'd (BENCHMATRIX_CHILD_START=exec)"), 8, exec_log)
        self.assertEqual(sorted(forked, key=str), sorted(execd, key=str))

        def keys(value, prefix=""):
            if not isinstance(value, dict):
                return {prefix}
            return set().union(*(keys(v, f"{prefix}.{k}") for k, v in value.items()))
        for config, record in forked.items():
            other = execd[config]
            self.assertEqual(record["verification_code"], "PASS", (config, record))
            self.assertEqual(other["verification_code"], "PASS", (config, other))
            self.assertEqual(keys(record), keys(other), config)
            self.assertEqual(record["model"], other["model"])
            # the fork did not load LibTorch again: the CPU time the child had used when it began
            # timing is below the exec'd child's, which includes the load (about 0.3 s)
            self.assertLess(record["machine_state"]["start"]["host"]["process_cpu_s"],
                            other["machine_state"]["start"]["host"]["process_cpu_s"], config)

    def test_a_bad_child_start_is_a_usage_error(self):
        proc = run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=None",
                   f"--output-dirname={self.out}", check=False,
                   env=dict(os.environ, BENCHMATRIX_CHILD_START="vfork"))
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("BENCHMATRIX_CHILD_START=vfork: expected fork (the default: CPU children start "
                      "as forks of the sweep) or exec (every child exec'd)", proc.stderr)
        self.assertFalse(os.path.exists(self.results))


if __name__ == "__main__":
    unittest.main()
