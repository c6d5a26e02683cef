"""Profiling flags on the CPU: Kineto traces and tables per repeat, CPU times, per-op times."""
import glob
import json
import os
import re
import unittest

from harness import RUNNER, SHARED_CACHE, OutputDirTest, read_records, run

TIME = re.compile(r"^([0-9.]+)(us|ms|s)$")


def seconds(text):
    value, unit = TIME.match(text).groups()
    return float(value) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


class ProfilingTest(OutputDirTest):
    def test_dumps_tables_and_metrics_of_a_profiling_pass(self):
        run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=None",
            "--test=eval", "--repeat=2", "--iterations-per-run=3", "--dump-pytorch-profiles",
            "--profile-cuda-cpu", "--profile-cuda-cpu-individual-ops", "--profile-cupti",
            f"--output-dirname={self.out}")
        [record] = read_records(self.results)
        metrics = record["metrics"]
        self.assertEqual(len(metrics["total_time"]), 2)  # the timed repeats, unchanged
        for key in ("total_cpu_time_s", "per_iter_cpu_time_s", "total_cuda_time_s", "per_iter_cuda_time_s"):
            self.assertEqual(len(metrics[key]), 2, key)
        self.assertTrue(all(t > 0 for t in metrics["total_cpu_time_s"]))
        self.assertEqual(metrics["total_cuda_time_s"], [0.0, 0.0])  # CPU only
        for total, per_iter in zip(metrics["total_cpu_time_s"], metrics["per_iter_cpu_time_s"]):
            self.assertAlmostEqual(per_iter * 3, total)
        ops = record["profile"]["eager_ops"]
        self.assertIn("aten::addmm", ops)  # the C++ Linear calls addmm directly
        self.assertEqual(ops["aten::addmm"]["num_of_calls"], 3 * 3)  # 3 layers x 3 iterations
        self.assertEqual(set(ops["aten::addmm"]), {"self_cpu_time_s", "self_cuda_time_s",
                                                     "total_cpu_time_s", "total_cuda_time_s",
                                                     "num_of_calls"})
        self.assertTrue(all("aten::" in name for name in ops))
        self.assertIn("this config runs on the CPU", record["profile"]["cupti_note"])

        model_dir = os.path.join(self.out, "dummy")
        for r in ("0", "1"):
            [trace] = glob.glob(os.path.join(model_dir, r, "trace-*.json"))
            with open(trace, encoding="utf-8") as f:
                events = json.load(f)["traceEvents"]
            aten = [e for e in events if e.get("name", "").startswith("aten::")]
            self.assertTrue(aten, "no aten op events in the trace")
            self.assertTrue(all("ts" in e and "dur" in e for e in aten))
            [table_path] = glob.glob(os.path.join(model_dir, r, "pytorch-profile-*.txt"))
            basename = os.path.basename(table_path)[len("pytorch-profile-"):]
            self.assertEqual(os.path.basename(trace), "trace-" + basename[:-4] + ".json")
            with open(table_path, encoding="utf-8") as f:
                table = f.read()
            self.assertIn("Self CPU %", table)
            self.assertNotIn("Self CUDA", table)
            # The Self CPU column adds up to the footer's total, and so do the percentages.
            rows = [line.split() for line in table.splitlines()
                    if line.strip() and not line.startswith("-") and "Name" not in line
                    and not line.startswith("Self CPU time total")]
            total = seconds(re.search(r"Self CPU time total: (\S+)", table).group(1))
            self_cpu = sum(seconds(row[-5]) for row in rows)
            self.assertAlmostEqual(self_cpu, total, delta=total * 0.01 + 1e-6 * len(rows))
            self.assertAlmostEqual(sum(float(row[-6].rstrip("%")) for row in rows), 100.0,
                                   delta=0.01 * len(rows) + 0.05)
        [concatenated] = glob.glob(os.path.join(model_dir, "pytorch-profile-*.txt"))
        with open(concatenated, encoding="utf-8") as f:
            self.assertEqual(f.read().count("Self CPU time total"), 2)


    def test_ir_dumps_and_counters_per_backend(self):
        run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=None",
            "--dynamo=torchscript", "--dynamo=inductor", "--test=eval", "--repeat=2",
            "--save-ir-format=text", "--dump-hlo", "--collect-dynamo-counters",
            "--dump-dynamo-counters", f"--cache-dir={SHARED_CACHE}", f"--output-dirname={self.out}",
            timeout=900)
        records = {r["experiment"]["dynamo"]: r for r in read_records(self.results)}
        model_dir = os.path.join(self.out, "dummy")

        def only(pattern):
            [path] = glob.glob(os.path.join(model_dir, pattern))
            return path

        for backend in ("torchscript", "inductor"):
            with open(only(f"dump-cpu-{backend}-*.text"), encoding="utf-8") as f:
                text = f.read()
            self.assertIn("# traced graph", text)
            self.assertIn("graph(", text)
        with open(only("dump-cpu-torchscript-*.text"), encoding="utf-8") as f:
            self.assertIn("optimize_for_inference", f.read())
        sources = os.listdir(only("hlo-cpu-inductor-*"))
        self.assertTrue(any(name.endswith(".wrapper.cpp") for name in sources), sources)
        self.assertIn("eager has no traced graph", records[None]["ir_note"])
        self.assertIn("torchscript generates no code to dump", records["torchscript"]["ir_note"])
        self.assertNotIn("ir_note", records["inductor"])

        eager = records[None]["dynamo_counters"]
        self.assertEqual(eager["stats"], {"unique_graphs": 0, "calls_captured": 0})
        script = records["torchscript"]["dynamo_counters"]
        self.assertEqual(script["stats"], {"unique_graphs": 1, "calls_captured": 2})
        self.assertEqual(script["cudagraph"], {"captures": 0})
        self.assertEqual(script["fallbacks"], {"eager": 0})
        inductor = records["inductor"]["dynamo_counters"]
        self.assertEqual(inductor["compile"]["cache_hit"] + inductor["compile"]["cache_miss"], 1)
        self.assertEqual(inductor["compile"]["cache_hit"],
                         int(records["inductor"]["compile"]["cache_hit"]))
        with open(only("0/dynamo-counters-cpu-inductor-*.txt"), encoding="utf-8") as f:
            first = json.load(f)
        with open(only("1/dynamo-counters-cpu-inductor-*.txt"), encoding="utf-8") as f:
            second = json.load(f)
        self.assertEqual(first["stats"], {"unique_graphs": 1, "calls_captured": 1})
        self.assertIn("compile", first)  # the preparation counts once, with the first repeat
        self.assertEqual(second["stats"], {"calls_captured": 1})
        self.assertNotIn("compile", second)

    def test_hlo_and_stablehlo_are_openxlas_only(self):
        for fmt, note in (("stablehlo", "torchscript has no StableHLO"), ("hlo", "torchscript has no HLO")):
            with self.subTest(format=fmt):
                if os.path.exists(self.results):
                    os.remove(self.results)
                run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=torchscript",
                    "--test=eval", "--repeat=1", f"--save-ir-format={fmt}", f"--output-dirname={self.out}")
                [record] = read_records(self.results)
                self.assertIn(note, record["ir_note"])
                self.assertEqual(glob.glob(os.path.join(self.out, "dummy", "dump-*")), [])
                self.assertEqual(glob.glob(os.path.join(self.out, "dummy", "hlo-*")), [])  # no XLA dumps


if __name__ == "__main__":
    unittest.main()
