"""aggregate: the speedup reports of aggregate.py over crafted results files, compared with golden
CSV and markdown text: two sweeps (timestamps) of an H200 and one of a CPU, backends eager, inductor
and cudagraphs, one model at two batch sizes, error/SKIP/verify records, older record variants
(no timestamp, null total_time), NaN samples, too few samples, a record missing a field and a
corrupt line. One speedup and one geomean are recomputed here from the raw samples (numpy); the SVG
and HTML outputs are parsed as XML; bad input gives clear errors."""
import csv
import json
import math
import os
import statistics
import unittest
import xml.etree.ElementTree as ET

from harness import OutputDirTest, run

AGGREGATE = os.environ.get("AGGREGATE", "../../build/aggregate")

T1 = 1700000000.5    # 2023-11-14 22:13:20.5 UTC
T2 = 1700086400.25   # a day later
T3 = 1700100000.0    # the CPU sweep


def rec(model, dynamo=None, metrics=None, batch_size=8, timestamp=T1, test="eval", xla=None,
        accelerator="cuda", accelerator_model="NVIDIA H200", code="VERIFIER_SKIPPED"):
    return {"model": {"suite_name": "torchbench", "model_name": model},
            "experiment": {"accelerator": accelerator, "accelerator_model": accelerator_model, "xla": xla,
                           "xla_flags": None, "dynamo": dynamo, "torch_xla2": None, "keep_model_data_on_cuda": False,
                           "test": test, "batch_size": batch_size, "enable_functionalization": False},
            "repeat": len((metrics or {}).get("total_time") or []), "iterations_per_run": 1,
            "metrics": metrics if metrics is not None else {}, "timestamp": timestamp, "verification_code": code}


def timed(model, dynamo, samples, **kw):
    return json.dumps(rec(model, dynamo, {"total_time": samples, "per_iter_time": samples}, **kw))


# warm-up samples first (dropped: the first 3), then the kept ones
W = [9.0, 2.0, 2.0]
EAGER_R18_B8_T1 = [0.10, 0.12, 0.11]
INDUCTOR_R18_B8_T1 = [0.05, 0.06, 0.055]

H200_LINES = [
    # sweep 1
    timed("resnet18", None, W + EAGER_R18_B8_T1),
    timed("resnet18", "inductor", W + INDUCTOR_R18_B8_T1),
    timed("resnet18", None, W + [0.2, 0.22], batch_size=16),
    timed("resnet18", "inductor", W + [0.1, 0.1], batch_size=16),
    timed("BERT_pytorch", None, W + [0.3, 0.31, 0.29, 0.3]),
    timed("BERT_pytorch", "inductor", W + [0.2, 0.21, 0.19, 0.2]),
    timed("alexnet", None, W + [0.04]),                       # one sample left: std 0
    timed("alexnet", "cudagraphs", W + [0.01, 0.011]),
    json.dumps(rec("llama", "inductor", {"error": "child exited with status 1"}, code="VERIFIER_DIDNT_RUN")),
    json.dumps(rec("dlrm", None, {"error": "SKIP"}, batch_size=None)),
    json.dumps(rec("resnet18", "inductor", {}, batch_size=None, code="PASS")),  # verify record: no timings
    '{"model": {"suite_name": "torchbench", "model_name": "dcgan"}, "experiment": {"accelerator": "cuda", "accelerator_model": "NVIDIA H200", "xla": null, "xla_flags": null, "dynamo": null, "torch_xla2": null, "test": "eval", "batch_size": 4}, "repeat": 5, "iterations_per_run": 1, "metrics": {"total_time": [1.0, 1.0, 1.0, NaN, 0.2]}, "timestamp": 1700000000.5, "verification_code": "VERIFIER_SKIPPED"}',
    timed("vgg16", None, [1.0, 0.5, 0.5]),                   # no sample past the first 3: skipped
    # older variants: no timestamp/verification_code (skipped, warned), null total_time (skipped)
    '{"model": {"suite_name": "torchbench", "model_name": "squeezenet1_1"}, "experiment": {"experiment_name": "run_all", "accelerator": "cuda", "accelerator_model": "NVIDIA H200", "xla": null, "xla_flags": null, "dynamo": null, "test": "eval", "batch_size": 8}, "repeat": 4, "iterations_per_run": 1, "metrics": {"total_time": [1.0, 1.0, 1.0, 1.0]}, "outputs_file": null}',
    '{"model": {"suite_name": "torchbench", "model_name": "squeezenet1_1"}, "experiment": {"experiment_name": "run_all", "accelerator": "cuda", "accelerator_model": "NVIDIA H200", "xla": null, "xla_flags": null, "dynamo": null, "test": "eval", "batch_size": 8}, "repeat": 4, "iterations_per_run": 1, "metrics": {"total_time": null, "verification_mean_rel_error": 0.0}, "timestamp": 1700000000.5, "outputs_file": null}',
    "this line is not JSON",
    # sweep 2
    timed("resnet18", None, W + [0.09, 0.1, 0.11], timestamp=T2),
    timed("resnet18", "inductor", W + [0.04, 0.05, 0.045], timestamp=T2),
    timed("resnet18", "inductor", W + [0.09, 0.1], timestamp=T2, batch_size=16),
    timed("resnet18", "cudagraphs", W + [0.03, 0.035, 0.04], timestamp=T2),
    timed("BERT_pytorch", "inductor", W + [0.25, 0.26], timestamp=T2),
    timed("alexnet", None, W + [0.05, 0.05], timestamp=T2),
    timed("alexnet", "cudagraphs", W + [0.02, 0.021], timestamp=T2),
    timed("alexnet", "inductor", W + [0.03, 0.03], timestamp=T2, test="train"),  # other test
]
CPU_LINES = [
    timed("resnet18", None, W + [1.0, 1.1], timestamp=T3, accelerator="cpu", accelerator_model="AMD EPYC 7B13"),
    timed("resnet18", "inductor", W + [0.5, 0.6], timestamp=T3, accelerator="cpu", accelerator_model="AMD EPYC 7B13"),
    # a record missing experiment.xla: warned and skipped, the file goes on
    '{"model": {"suite_name": "torchbench", "model_name": "alexnet"}, "experiment": {"accelerator": "cpu", "accelerator_model": "AMD EPYC 7B13", "dynamo": null, "test": "eval", "batch_size": 8}, "metrics": {"total_time": [1, 1, 1, 1]}, "timestamp": 1700100000.0}',
]

H200_ARGS = ["--accelerator=h200", "--backends", "eager", "inductor", "cudagraphs"]
REPORTS = ["speedup", "latest", "latest_grouped", "histogram"]
# GOLDEN[(report, baseline, format)]: the exact stdout for H200_ARGS over both files.
GOLDEN = {
    ('speedup', 'oldest', 'csv'): (
        '# Datetime(UTC),Speedup(Eager/Oldest Eager),StdDev,Speedup(Inductor/Oldest Eager),StdDev,Speedup(CUDAGraphs/Oldest Eager),StdDev\n'
        '2023-11-14 22:13:20.500000,1.0,0.0295922,1.75330694,0.07679317,3.80952381,0.25654668\n'
        '2023-11-15 22:13:20.250000,0.93808315,0.06338913,1.65371057,0.07922741,2.47636915,0.21396745\n'
    ),
    ('speedup', 'oldest', 'markdown'): (
        '| Datetime(UTC)              | Speedup(Eager/Oldest Eager) | StdDev | Speedup(Inductor/Oldest Eager) | StdDev | Speedup(CUDAGraphs/Oldest Eager) | StdDev |\n'
        '|:---------------------------|----------------------------:|-------:|-------------------------------:|-------:|---------------------------------:|-------:|\n'
        '| 2023-11-14 22:13:20.500000 |                        1.00 |   0.03 |                           1.75 |   0.08 |                             3.81 |   0.26 |\n'
        '| 2023-11-15 22:13:20.250000 |                        0.94 |   0.06 |                           1.65 |   0.08 |                             2.48 |   0.21 |\n'
    ),
    ('speedup', 'latest', 'csv'): (
        '# Datetime(UTC),Speedup(Eager/Latest Eager),StdDev,Speedup(Inductor/Latest Eager),StdDev,Speedup(CUDAGraphs/Latest Eager),StdDev\n'
        '2023-11-14 22:13:20.500000,1.06600358,0.0720331,1.81818182,0.24572014,4.76190476,0.32068335\n'
        '2023-11-15 22:13:20.250000,1.0,0.07071068,2.22222222,0.33218825,2.63981839,0.23462451\n'
    ),
    ('speedup', 'latest', 'markdown'): (
        '| Datetime(UTC)              | Speedup(Eager/Latest Eager) | StdDev | Speedup(Inductor/Latest Eager) | StdDev | Speedup(CUDAGraphs/Latest Eager) | StdDev |\n'
        '|:---------------------------|----------------------------:|-------:|-------------------------------:|-------:|---------------------------------:|-------:|\n'
        '| 2023-11-14 22:13:20.500000 |                        1.07 |   0.07 |                           1.82 |   0.25 |                             4.76 |   0.32 |\n'
        '| 2023-11-15 22:13:20.250000 |                        1.00 |   0.07 |                           2.22 |   0.33 |                             2.64 |   0.23 |\n'
    ),
    ('latest', 'oldest', 'csv'): (
        '# Workload,Speedup(Eager/Oldest Eager),StdDev,ModelName(Eager),Speedup(Inductor/Oldest Eager),StdDev,ModelName(Inductor),Speedup(CUDAGraphs/Oldest Eager),StdDev,ModelName(CUDAGraphs)\n'
        '0,0.8,0.0,alexnet,1.17647059,0.04571123,BERT_pytorch,1.95121951,0.06730344,alexnet\n'
        '1,1.1,0.14866069,resnet18,2.32454485,0.20359833,resnet18,3.14285714,0.53217979,resnet18\n'
    ),
    ('latest', 'oldest', 'markdown'): (
        '| Workload | Speedup(Eager/Oldest Eager) | StdDev | ModelName(Eager) | Speedup(Inductor/Oldest Eager) | StdDev | ModelName(Inductor) | Speedup(CUDAGraphs/Oldest Eager) | StdDev | ModelName(CUDAGraphs) |\n'
        '|---------:|----------------------------:|-------:|:-----------------|-------------------------------:|-------:|:--------------------|---------------------------------:|-------:|:----------------------|\n'
        '|        0 |                        0.80 |   0.00 | alexnet          |                           1.18 |   0.05 | BERT_pytorch        |                             1.95 |   0.07 | alexnet               |\n'
        '|        1 |                        1.10 |   0.15 | resnet18         |                           2.32 |   0.20 | resnet18            |                             3.14 |   0.53 | resnet18              |\n'
    ),
    ('latest', 'latest', 'csv'): (
        '# Workload,Speedup(Eager/Latest Eager),StdDev,ModelName(Eager),Speedup(Inductor/Latest Eager),StdDev,ModelName(Inductor),Speedup(CUDAGraphs/Latest Eager),StdDev,ModelName(CUDAGraphs)\n'
        '0,1.0,0.0,alexnet,2.22222222,0.33218825,resnet18,2.43902439,0.0841293,alexnet\n'
        '1,1.0,0.14142136,resnet18,,,,2.85714286,0.49822676,resnet18\n'
    ),
    ('latest', 'latest', 'markdown'): (
        '| Workload | Speedup(Eager/Latest Eager) | StdDev | ModelName(Eager) | Speedup(Inductor/Latest Eager) | StdDev | ModelName(Inductor) | Speedup(CUDAGraphs/Latest Eager) | StdDev | ModelName(CUDAGraphs) |\n'
        '|---------:|----------------------------:|-------:|:-----------------|-------------------------------:|-------:|:--------------------|---------------------------------:|-------:|:----------------------|\n'
        '|        0 |                        1.00 |   0.00 | alexnet          |                           2.22 |   0.33 | resnet18            |                             2.44 |   0.08 | alexnet               |\n'
        '|        1 |                        1.00 |   0.14 | resnet18         |                                |        |                     |                             2.86 |   0.50 | resnet18              |\n'
    ),
    ('latest_grouped', 'oldest', 'csv'): (
        '# ModelName,Speedup(Eager/Oldest Eager),StdDev,Speedup(Inductor/Oldest Eager),StdDev,Speedup(CUDAGraphs/Oldest Eager),StdDev\n'
        'alexnet,0.8,0.0,,,1.95121951,0.06730344\n'
        'BERT_pytorch,,,1.17647059,0.04571123,,\n'
        'resnet18,1.1,0.14866069,2.32454485,0.20359833,3.14285714,0.53217979\n'
        'GEOMEAN,0.93808315,0.06338913,1.65371057,0.07922741,2.47636915,0.21396745\n'
    ),
    ('latest_grouped', 'oldest', 'markdown'): (
        '| ModelName    | Speedup(Eager/Oldest Eager) | StdDev | Speedup(Inductor/Oldest Eager) | StdDev | Speedup(CUDAGraphs/Oldest Eager) | StdDev |\n'
        '|:-------------|----------------------------:|-------:|-------------------------------:|-------:|---------------------------------:|-------:|\n'
        '| alexnet      |                        0.80 |   0.00 |                                |        |                             1.95 |   0.07 |\n'
        '| BERT_pytorch |                             |        |                           1.18 |   0.05 |                                  |        |\n'
        '| resnet18     |                        1.10 |   0.15 |                           2.32 |   0.20 |                             3.14 |   0.53 |\n'
        '| GEOMEAN      |                        0.94 |   0.06 |                           1.65 |   0.08 |                             2.48 |   0.21 |\n'
    ),
    ('latest_grouped', 'latest', 'csv'): (
        '# ModelName,Speedup(Eager/Latest Eager),StdDev,Speedup(Inductor/Latest Eager),StdDev,Speedup(CUDAGraphs/Latest Eager),StdDev\n'
        'alexnet,1.0,0.0,,,2.43902439,0.0841293\n'
        'resnet18,1.0,0.14142136,2.22222222,0.33218825,2.85714286,0.49822676\n'
        'GEOMEAN,1.0,0.07071068,2.22222222,0.33218825,2.63981839,0.23462451\n'
    ),
    ('latest_grouped', 'latest', 'markdown'): (
        '| ModelName | Speedup(Eager/Latest Eager) | StdDev | Speedup(Inductor/Latest Eager) | StdDev | Speedup(CUDAGraphs/Latest Eager) | StdDev |\n'
        '|:----------|----------------------------:|-------:|-------------------------------:|-------:|---------------------------------:|-------:|\n'
        '| alexnet   |                        1.00 |   0.00 |                                |        |                             2.44 |   0.08 |\n'
        '| resnet18  |                        1.00 |   0.14 |                           2.22 |   0.33 |                             2.86 |   0.50 |\n'
        '| GEOMEAN   |                        1.00 |   0.07 |                           2.22 |   0.33 |                             2.64 |   0.23 |\n'
    ),
    ('histogram', 'oldest', 'csv'): (
        '# Datetime(UTC),Eager p95,Eager p50,Eager p5,Inductor p95,Inductor p50,Inductor p5,CUDAGraphs p95,CUDAGraphs p50,CUDAGraphs p5\n'
        '2023-11-14 22:13:20.500000,1.0,1.0,1.0,2.02192065,1.77469508,1.52746951,3.80952381,3.80952381,3.80952381\n'
        '2023-11-15 22:13:20.250000,1.085,0.95,0.815,2.26714114,1.75050772,1.2338743,3.08327526,2.54703833,2.01080139\n'
    ),
    ('histogram', 'oldest', 'markdown'): (
        '| Datetime(UTC)              | Eager p95 | Eager p50 | Eager p5 | Inductor p95 | Inductor p50 | Inductor p5 | CUDAGraphs p95 | CUDAGraphs p50 | CUDAGraphs p5 |\n'
        '|:---------------------------|----------:|----------:|---------:|-------------:|-------------:|------------:|---------------:|---------------:|--------------:|\n'
        '| 2023-11-14 22:13:20.500000 |      1.00 |      1.00 |     1.00 |         2.02 |         1.77 |        1.53 |           3.81 |           3.81 |          3.81 |\n'
        '| 2023-11-15 22:13:20.250000 |      1.08 |      0.95 |     0.81 |         2.27 |         1.75 |        1.23 |           3.08 |           2.55 |          2.01 |\n'
    ),
    ('histogram', 'latest', 'csv'): (
        '# Datetime(UTC),Eager p95,Eager p50,Eager p5,Inductor p95,Inductor p50,Inductor p5,CUDAGraphs p95,CUDAGraphs p50,CUDAGraphs p5\n'
        '2023-11-14 22:13:20.500000,1.23295455,1.07954545,0.92613636,1.81818182,1.81818182,1.81818182,4.76190476,4.76190476,4.76190476\n'
        '2023-11-15 22:13:20.250000,1.0,1.0,1.0,2.22222222,2.22222222,2.22222222,2.83623693,2.64808362,2.45993031\n'
    ),
    ('histogram', 'latest', 'markdown'): (
        '| Datetime(UTC)              | Eager p95 | Eager p50 | Eager p5 | Inductor p95 | Inductor p50 | Inductor p5 | CUDAGraphs p95 | CUDAGraphs p50 | CUDAGraphs p5 |\n'
        '|:---------------------------|----------:|----------:|---------:|-------------:|-------------:|------------:|---------------:|---------------:|--------------:|\n'
        '| 2023-11-14 22:13:20.500000 |      1.23 |      1.08 |     0.93 |         1.82 |         1.82 |        1.82 |           4.76 |           4.76 |          4.76 |\n'
        '| 2023-11-15 22:13:20.250000 |      1.00 |      1.00 |     1.00 |         2.22 |         2.22 |        2.22 |           2.84 |           2.65 |          2.46 |\n'
    ),
}


def mean_std(samples):
    """The seed's exec datapoint of kept samples: mean and sample std (ddof=1), 0 for one sample."""
    import numpy as np
    return float(np.average(samples)), (float(np.std(samples, ddof=1)) if len(samples) > 1 else 0.0)


def speedup(experiment, baseline):
    (ea, es), (ba, bs) = experiment, baseline
    s = ba / ea
    return s, s * math.sqrt((es / ea) ** 2 + (bs / ba) ** 2)


def geomean(points):
    g = math.exp(sum(math.log(a) for a, _ in points) / len(points))
    return g, g / len(points) * math.sqrt(sum((e / a) ** 2 for a, e in points))


class AggregateTest(OutputDirTest):
    def setUp(self):
        super().setUp()
        self.h200 = os.path.join(self.out, "h200.jsonl")
        self.cpu = os.path.join(self.out, "cpu.jsonl")
        with open(self.h200, "w") as f:
            f.write("\n".join(H200_LINES) + "\n")
        with open(self.cpu, "w") as f:
            f.write("\n".join(CPU_LINES) + "\n")

    def aggregate(self, *args, check=True):
        return run(AGGREGATE, self.h200, self.cpu, *args, check=check)  # files first: --backends takes 1+

    def test_csv_and_markdown_reports_match_golden(self):
        for (report, baseline, fmt), golden in GOLDEN.items():
            with self.subTest(report=report, baseline=baseline, format=fmt):
                proc = self.aggregate(*H200_ARGS, f"--report={report}", f"--baseline={baseline}",
                                      f"--format={fmt}")
                self.assertEqual(proc.stdout, golden)

    def test_unusable_lines_are_reported_with_file_and_line(self):
        stderr = self.aggregate(*H200_ARGS).stderr
        self.assertIn("h200.jsonl:16: skipped: invalid JSON", stderr)             # the corrupt line
        self.assertIn("h200.jsonl:12: skipped: metrics.total_time holds NaN", stderr)
        self.assertIn("h200.jsonl:14: skipped: the record has no timestamp", stderr)  # old variant
        self.assertIn("cpu.jsonl:3: skipped: the record has no experiment.xla", stderr)
        self.assertEqual(stderr.count("skipped"), 4)  # error, SKIP, verify, null and short records: quietly

    def test_speedup_report_recomputed_from_the_samples(self):
        """The whole speedup CSV (oldest baseline) from the raw samples with numpy, as the seed does."""
        import numpy as np
        kept = lambda s: s[3:]
        def point(samples):
            return mean_std(kept(samples))
        # per timestamp: backend -> model -> batch -> datapoint (the usable H200 eval records)
        data = {T1: {"eager": {"resnet18": {8: point(W + EAGER_R18_B8_T1), 16: point(W + [0.2, 0.22])},
                               "BERT_pytorch": {8: point(W + [0.3, 0.31, 0.29, 0.3])},
                               "alexnet": {8: point(W + [0.04])}},
                     "inductor": {"resnet18": {8: point(W + INDUCTOR_R18_B8_T1), 16: point(W + [0.1, 0.1])},
                                  "BERT_pytorch": {8: point(W + [0.2, 0.21, 0.19, 0.2])}},
                     "cudagraphs": {"alexnet": {8: point(W + [0.01, 0.011])}}},
                T2: {"eager": {"resnet18": {8: point(W + [0.09, 0.1, 0.11])}, "alexnet": {8: point(W + [0.05, 0.05])}},
                     "inductor": {"resnet18": {8: point(W + [0.04, 0.05, 0.045]), 16: point(W + [0.09, 0.1])},
                                  "BERT_pytorch": {8: point(W + [0.25, 0.26])}},
                     "cudagraphs": {"resnet18": {8: point(W + [0.03, 0.035, 0.04])},
                                    "alexnet": {8: point(W + [0.02, 0.021])}}}}
        baseline = {}
        for t in sorted(data):
            for model, batches in data[t]["eager"].items():
                for b, p in batches.items():
                    baseline.setdefault(model, {}).setdefault(b, p)
        lines = ["# Datetime(UTC),Speedup(Eager/Oldest Eager),StdDev,Speedup(Inductor/Oldest Eager),StdDev,"
                 "Speedup(CUDAGraphs/Oldest Eager),StdDev"]
        stamps = {T1: "2023-11-14 22:13:20.500000", T2: "2023-11-15 22:13:20.250000"}
        for t in sorted(data):
            cells = [stamps[t]]
            for backend in ("eager", "inductor", "cudagraphs"):
                per_model = []
                for model, batches in data[t][backend].items():
                    s = [speedup(p, baseline[model][b]) for b, p in batches.items() if b in baseline.get(model, {})]
                    if s:
                        per_model.append(geomean(s))
                g, e = geomean(per_model)
                cells += [str(round(np.float64(g), 8)), str(round(np.float64(e), 8))]
            lines.append(",".join(cells))
        self.assertEqual(self.aggregate(*H200_ARGS).stdout, "\n".join(lines) + "\n")
        # one cell by hand: resnet18 inductor at T1 over eager, geomean of batch sizes 8 and 16
        s8 = speedup(mean_std(INDUCTOR_R18_B8_T1), mean_std(EAGER_R18_B8_T1))
        s16 = speedup((0.1, 0.0), mean_std([0.2, 0.22]))
        self.assertAlmostEqual(s8[0], 0.11 / 0.055)
        self.assertAlmostEqual(s16[0], 2.1)
        g = geomean([s8, s16])
        latest = self.aggregate(*H200_ARGS, "--report=latest_grouped", "--baseline=oldest").stdout
        self.assertNotIn(f"resnet18,,,{round(g[0], 8)}", latest)  # T2 is the latest, not T1
        percentiles = self.aggregate(*H200_ARGS, "--report=histogram").stdout.splitlines()[2].split(",")
        t2_inductor = [v for v, _ in [geomean([speedup(data[T2]["inductor"]["resnet18"][b], baseline["resnet18"][b])
                                               for b in (8, 16)]),
                                      speedup(data[T2]["inductor"]["BERT_pytorch"][8], baseline["BERT_pytorch"][8])]]
        self.assertEqual(percentiles[4:7], [str(round(float(np.percentile(t2_inductor, p)), 8)) for p in (95, 50, 5)])

    def test_cpu_records_and_accelerator_words(self):
        for accelerator in ("cpu", "AMD EPYC", "epyc"):
            proc = self.aggregate(f"--accelerator={accelerator}", "--backends", "eager", "inductor")
            self.assertEqual(proc.stdout.splitlines()[1], "2023-11-16 02:00:00,1.0,0.0952381,1.90909091,0.27707528")
        proc = self.aggregate("--accelerator=h20", check=False)  # whole words only
        self.assertEqual(proc.returncode, 1)
        self.assertIn("no results found for --accelerator h20", proc.stderr)
        self.assertIn("NVIDIA H200", proc.stderr)  # names what the input holds

    def test_torch_xla2_records_are_their_own_backend(self):
        """aggregate.py ignored experiment.torch_xla2 and filed those runs under eager (xla=None) or
        openxla+lazytensor (xla=PJRT): here they are a column of their own."""
        path = os.path.join(self.out, "xla2.jsonl")
        lines = [timed("resnet18", None, W + [0.10, 0.10]), timed("resnet18", None, W + [0.04, 0.04])]
        xla2 = rec("resnet18", None, {"total_time": W + [0.05, 0.05]}, xla="PJRT")
        xla2["experiment"]["torch_xla2"] = "torch_export"
        lines[1] = json.dumps(xla2)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        proc = run(AGGREGATE, path, "--accelerator=h200", "--backends", "eager", "torch_xla2+torch_export",
                   "--report=latest")
        header, row = proc.stdout.splitlines()[:2]
        self.assertIn("Speedup(torch_xla2 (torch.export)/Oldest Eager)", header)
        # eager 0.10 s against torch_xla2's 0.05 s: each its own column, not pooled into eager's
        self.assertEqual(row.split(",")[1:], ["1.0", "0.0", "resnet18", "2.0", "0.0", "resnet18"])

    def test_skip_samples_and_compile_metric(self):
        proc = self.aggregate("--accelerator=cpu", "--backends", "eager", "inductor", "--skip-samples=0")
        self.assertNotEqual(proc.stdout.splitlines()[1].split(",")[3], "1.90909091")
        proc = self.aggregate("--accelerator=cpu", "--backends", "eager", "inductor", "--metric=compile")
        # compile time: total_time[0] - mean(total_time[1:]), std 0
        compile_speedup = (9.0 - (2 + 2 + 1.0 + 1.1) / 4) / (9.0 - (2 + 2 + 0.5 + 0.6) / 4)
        self.assertEqual(proc.stdout.splitlines()[1].split(",")[1:], ["1.0", "0.0", str(round(compile_speedup, 8)), "0.0"])

    def test_svg_and_html_are_well_formed_with_bars_and_labels(self):
        svg = self.aggregate(*H200_ARGS, "--report=latest_grouped", "--format=svg", "--title=nightly <H200>").stdout
        root = ET.fromstring(svg.encode())
        ns = {"s": "http://www.w3.org/2000/svg"}
        texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
        self.assertIn("Speedup over Oldest Benchmarked Eager", texts)
        self.assertIn("nightly <H200>", texts)  # escaped in the file, intact once parsed
        for label in ("alexnet", "BERT_pytorch", "resnet18", "GEOMEAN", "Eager", "Inductor", "CUDAGraphs", "3.14"):
            self.assertIn(label, texts)
        bars = root.findall(".//s:rect[@class='bar']", ns)
        self.assertEqual(len(bars), 2 + 1 + 3 + 3)  # alexnet 2, BERT_pytorch 1, resnet18 3, GEOMEAN 3
        self.assertEqual(len(root.findall(".//s:line[@class='reference']", ns)), 1)
        for report in ("speedup", "latest", "histogram"):
            root = ET.fromstring(self.aggregate(*H200_ARGS, f"--report={report}", "--format=svg").stdout.encode())
            self.assertEqual(root.get("width"), "864")
            self.assertTrue(root.findall(".//s:g[@class='series']", ns))
        html = self.aggregate(*H200_ARGS, "--report=latest", "--format=html").stdout
        self.assertTrue(html.startswith("<!DOCTYPE html>"))
        page = ET.fromstring(html.split("\n", 1)[1])  # the page is well-formed XML too
        self.assertEqual(len(page.findall(".//{http://www.w3.org/2000/svg}svg")), 1)
        self.assertEqual(len(page.findall(".//tbody/tr")), 2)

    def test_tab_format_is_a_box_table(self):
        out = self.aggregate(*H200_ARGS, "--report=latest_grouped", "--format=tab").stdout
        self.assertTrue(out.startswith("╒"))
        self.assertIn("│ GEOMEAN      │", out)
        self.assertIn("Speedup", out.splitlines()[1])

    def test_bad_input(self):
        proc = self.aggregate("--bogus", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("unrecognized arguments: --bogus", proc.stderr)
        proc = self.aggregate("--format=png", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("png is not supported", proc.stderr)
        self.assertIn("use --format svg", proc.stderr)
        proc = self.aggregate("--backends", "tvm", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("argument --backends: invalid choice: 'tvm'", proc.stderr)
        proc = run(AGGREGATE, os.path.join(self.out, "missing.jsonl"), check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("missing.jsonl does not exist", proc.stderr)
        proc = run(AGGREGATE, check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("the following arguments are required: input_file", proc.stderr)
        # --baseline latest: the latest timestamp (T2) has no inductor result for alexnet
        proc = self.aggregate("--accelerator=h200", "--backends", "inductor", "eager", "-k", "alexnet",
                              "--baseline=latest", check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("No inductor results in the latest timestamp 1700086400.25", proc.stderr)
        self.assertEqual(proc.stdout, "")



class LatestIntervalsTest(OutputDirTest):
    """--report=latest_intervals (not in the original): per model the latest speedup as a median
    with its bootstrap 95% interval, its kind (paired: the record's own; unpaired: two records'
    medians) and a verdict that says faster/slower only when the interval excludes 1."""

    def setUp(self):
        super().setUp()
        h100 = {"accelerator_model": "NVIDIA H100"}
        bert_cg = rec("hf_Bert", "cudagraphs", {"total_time": [0.3, 0.005, 0.005, 0.005],
                                                 "per_iter_time": [0.3, 0.005, 0.005, 0.005]}, **h100)
        bert_cg["paired"] = {"baseline": "eager", "order": "ABBA", "speedups": [1.9, 1.92, 1.95],
                             "speedup": {"median": 1.92, "low": 1.85, "high": 2.01, "confidence": 0.95,
                                         "count": 3}}
        lines = [
            timed("hf_Bert", None, [0.5, 0.010, 0.011, 0.0105], **h100),
            json.dumps(bert_cg),
            # inductor overlapping eager: within noise
            timed("llama", None, [0.5, 0.010, 0.012, 0.011, 0.0105], **h100),
            timed("llama", "inductor", [0.5, 0.0102, 0.0115, 0.0108, 0.0112], **h100),
            # inductor clearly faster
            timed("hf_Bert", "inductor", [0.5, 0.005, 0.0051, 0.0052], **h100),
        ]
        self.path = os.path.join(self.out, "h100.jsonl")
        with open(self.path, "w") as f:
            f.write("\n".join(lines) + "\n")

    def test_medians_intervals_kinds_and_verdicts(self):
        proc = run(AGGREGATE, self.path, "--accelerator=h100", "--backends", "eager", "inductor", "cudagraphs",
                   "--report=latest_intervals")
        lines = proc.stdout.splitlines()
        header = lines[0].lstrip("# ").split(",")
        self.assertEqual(header[:7], ["ModelName", "BatchSize", "Inductor speedup", "Inductor 95% low",
                                      "Inductor 95% high", "Inductor kind", "Inductor verdict"])
        rows = {cells[0]: dict(zip(header, cells)) for cells in csv.reader(lines[1:])}
        bert = rows["hf_Bert"]
        self.assertEqual([bert[f"CUDAGraphs {k}"] for k in ("speedup", "95% low", "95% high", "kind", "verdict")],
                         ["1.92", "1.85", "2.01", "paired", "faster"])
        self.assertEqual(bert["Inductor kind"], "unpaired")
        self.assertEqual(bert["Inductor verdict"], "faster")
        self.assertAlmostEqual(float(bert["Inductor speedup"]), 0.0105 / 0.0051, places=7)
        llama = rows["llama"]
        self.assertEqual(llama["Inductor verdict"], "within noise")
        self.assertLessEqual(float(llama["Inductor 95% low"]), 1)
        self.assertGreaterEqual(float(llama["Inductor 95% high"]), 1)
        self.assertEqual(llama["CUDAGraphs kind"], "")  # no cudagraphs record
        geomean = rows["GEOMEAN"]
        self.assertEqual(geomean["Inductor 95% low"], "")  # no interval for a geomean
        self.assertEqual(geomean["Inductor kind"], "no interval")
        self.assertEqual(geomean["Inductor verdict"], "1 faster, 0 slower, 1 within noise")
        self.assertAlmostEqual(float(geomean["Inductor speedup"]),
                               math.sqrt(float(bert["Inductor speedup"]) * float(llama["Inductor speedup"])), places=7)
        # the chart: bars at the medians, the intervals as error bars
        svg = run(AGGREGATE, self.path, "--accelerator=h100", "--backends", "eager", "inductor", "cudagraphs",
                  "--report=latest_intervals", "--format=svg").stdout
        root = ET.fromstring(svg)
        ns = "{http://www.w3.org/2000/svg}"
        self.assertGreaterEqual(len(root.findall(f".//{ns}line[@class='error-bar']")), 3)


class MemoryCompressionTest(OutputDirTest):
    """--report=memory_compression (issue 26): per model the baseline's peak memory / the backend's
    (device peak allocated, the median past repeat 0), below 0.9 flagged, GEOMEAN over the models;
    CPU records compare host peak RSS."""

    GIB = 1024 ** 3

    def memory_record(self, model, dynamo, peaks, key="peak_device_allocated_bytes", **kw):
        samples = [0.5] + [0.01] * (len(peaks) - 1)
        return json.dumps(rec(model, dynamo, {"total_time": samples, "per_iter_time": samples,
                                              key: peaks}, **kw))

    def test_ratios_flags_and_geomean(self):
        g = self.GIB
        lines = [
            self.memory_record("resnet50", None, [9 * g, 2 * g, 2 * g, 2 * g]),  # repeat 0 left out
            self.memory_record("resnet50", "inductor", [g, g, g, g]),             # 2x less
            self.memory_record("resnet50", "cudagraphs", [3 * g, 2.5 * g, 2.5 * g, 2.5 * g]),  # 0.8
            self.memory_record("hf_Bert", None, [g, g, g, g]),
            self.memory_record("hf_Bert", "inductor", [g, 0.8 * g, 0.8 * g, 0.8 * g]),  # 1.25
            self.memory_record("alexnet", None, [g, g, g, g]),  # no compiled record: no row
            # a CPU record: host RSS against host RSS
            self.memory_record("dcgan", None, [4e8, 2e8, 2e8], key="peak_host_rss_bytes",
                               accelerator="cpu", accelerator_model="x86", timestamp=T3),
            self.memory_record("dcgan", "inductor", [4e8, 4e8, 4e8], key="peak_host_rss_bytes",
                               accelerator="cpu", accelerator_model="x86", timestamp=T3),
        ]
        path = os.path.join(self.out, "memory.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        proc = run(AGGREGATE, path, "--accelerator=h200", "--backends", "eager", "inductor",
                   "cudagraphs", "--report=memory_compression")
        lines = proc.stdout.splitlines()
        header = lines[0].lstrip("# ").split(",")
        self.assertEqual(header, ["ModelName", "BatchSize", "Inductor compression", "Inductor flag",
                                  "CUDAGraphs compression", "CUDAGraphs flag"])
        rows = {cells[0]: dict(zip(header, cells)) for cells in csv.reader(lines[1:])}
        self.assertEqual(set(rows), {"resnet50", "hf_Bert", "GEOMEAN"})
        self.assertEqual(float(rows["resnet50"]["Inductor compression"]), 2.0)
        self.assertEqual(rows["resnet50"]["Inductor flag"], "")
        self.assertEqual(float(rows["resnet50"]["CUDAGraphs compression"]), 0.8)
        self.assertEqual(rows["resnet50"]["CUDAGraphs flag"], "below 0.9")
        self.assertEqual(float(rows["hf_Bert"]["Inductor compression"]), 1.25)
        geomean = rows["GEOMEAN"]
        self.assertAlmostEqual(float(geomean["Inductor compression"]), math.sqrt(2.0 * 1.25), places=7)
        self.assertEqual(geomean["Inductor flag"], "0 of 2 rows below 0.9")
        self.assertEqual(geomean["CUDAGraphs flag"], "below 0.9; 1 of 1 rows below 0.9")
        cpu = run(AGGREGATE, path, "--accelerator=cpu", "--backends", "eager", "inductor",
                  "--report=memory_compression").stdout.splitlines()
        self.assertTrue(cpu[1].startswith("dcgan,8,0.5,below 0.9"), cpu)


if __name__ == "__main__":
    unittest.main()
