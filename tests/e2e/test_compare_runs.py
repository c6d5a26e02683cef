"""compare_runs: two crafted runs (A: reference, B: candidate) compared per configuration, with exact
golden table, markdown and CSV text: a clear regression (B 20% slower, 10 samples) and a clear
improvement (U test, normal approximation), an exact-distribution case (6 samples), noisy overlapping
samples with a 6% median ratio (SAME), few samples beyond the threshold (verdict by threshold), an
error in B (BROKEN) and in A (FIXED), verification PASS -> FAIL (BROKEN), SKIP on both sides,
missing and new configurations, an older record variant (reference §5.4), NaN samples, a corrupt
line and a line replaced by a later one. The U test's p-values are checked against scipy live, the
geomeans against a Python computation; --threshold, --fail-on, --metric, directories and bad input."""
import json
import math
import os
import re
import shutil
import statistics
import unittest

from harness import OutputDirTest, run

COMPARE_RUNS = os.environ.get("COMPARE_RUNS", "../../build/compare_runs")

H200 = "NVIDIA H200"


def rec(model, dynamo=None, metrics=None, batch_size=8, test="eval", code="VERIFIER_SKIPPED", suite="torchbench"):
    return {"model": {"suite_name": suite, "model_name": model},
            "experiment": {"accelerator": "cuda", "accelerator_model": H200, "xla": None, "xla_flags": None,
                           "dynamo": dynamo, "torch_xla2": None, "keep_model_data_on_cuda": False, "test": test,
                           "batch_size": batch_size, "enable_functionalization": False},
            "repeat": len((metrics or {}).get("per_iter_time") or []), "iterations_per_run": 1,
            "metrics": metrics if metrics is not None else {}, "timestamp": 1700000000.5, "verification_code": code}


def timed(model, dynamo, samples, **kw):
    """A timing record; its first sample (repeat 0, dropped by default) is a slow first call."""
    per_iter = [samples[0] * 5] + samples
    return json.dumps(rec(model, dynamo, {"total_time": per_iter, "per_iter_time": per_iter}, **kw))


def scaled(samples, factor):
    return [round(x * factor, 6) for x in samples]


R50_A = [0.0100, 0.0102, 0.0099, 0.0101, 0.0103, 0.0098, 0.0100, 0.0104, 0.0097, 0.0101]
R18_A = [0.0050, 0.0051, 0.0049, 0.0052, 0.0050, 0.0048, 0.0051, 0.0050, 0.0053, 0.0049]
BERT_A = [0.100, 0.080, 0.125, 0.090, 0.115, 0.095, 0.130, 0.085, 0.105, 0.110]
BERT_B = [0.095, 0.140, 0.088, 0.120, 0.107, 0.130, 0.083, 0.1103, 0.118, 0.091]  # median ratio 1.06
SHUF_A = [0.0020, 0.0021, 0.0019, 0.00205, 0.00195, 0.00202]                      # 6 samples: exact test
DCGAN = [0.0030, 0.0031, 0.0029, 0.0030, 0.00305, 0.00295]

A_LINES = [
    timed("resnet50", None, R50_A, batch_size=32),
    timed("resnet18", "inductor", R18_A, batch_size=16),
    timed("BERT_pytorch", None, BERT_A),
    timed("shufflenet_v2_x1_0", None, SHUF_A),
    timed("alexnet", None, [0.0040, 0.0041, 0.0039]),
    timed("dlrm", "inductor", [0.0200, 0.0201, 0.0199, 0.0202, 0.0200]),
    # a child that dies before it builds the model records no batch size: still the same config as B's
    json.dumps(rec("llama", None, {"error": "child killed by signal SIGSEGV\n(core dumped)"}, batch_size=None,
                   code="VERIFIER_DIDNT_RUN")),
    json.dumps(rec("hf_Bert", "inductor", {}, batch_size=None, code="PASS")),
    json.dumps(rec("hf_GPT2", "inductor", {}, batch_size=None, code="PASS")),
    json.dumps(rec("mobilenet_v2", "cudagraphs", {"error": "SKIP: dynamo=cudagraphs is in the skip list"}, batch_size=None)),
    timed("vgg16", None, [0.0300, 0.0301, 0.0299]),
    # an older record (reference §5.4): experiment_name, outputs_file, no timestamp or verification_code
    '{"model": {"suite_name": "torchbench", "model_name": "dcgan"}, "experiment": {"experiment_name": "run_all", "accelerator": "cuda", "accelerator_model": "NVIDIA H200", "xla": null, "xla_flags": null, "dynamo": null, "test": "eval", "batch_size": 8}, "repeat": 7, "iterations_per_run": 1, "metrics": {"total_time": null, "per_iter_time": [0.015, 0.003, 0.0031, 0.0029, 0.003, 0.00305, 0.00295], "verification_mean_rel_error": 0.0}, "outputs_file": null}',
    timed("squeezenet1_1", None, [0.0060, 0.0061, 0.0059, 0.0060, 0.0062]),
]

B_LINES = [
    timed("resnet50", None, R50_A, batch_size=32),  # replaced below, as a resumed sweep's line would be
    timed("resnet50", None, scaled(R50_A, 1.2), batch_size=32),
    timed("resnet18", "inductor", scaled(R18_A, 0.75), batch_size=16),
    timed("BERT_pytorch", None, BERT_B),
    timed("shufflenet_v2_x1_0", None, scaled(SHUF_A, 1.15)),
    timed("alexnet", None, [0.0044, 0.0045, 0.0043]),
    json.dumps(rec("dlrm", "inductor", {"error": "child exited with status 1: CUDA error: an illegal memory access was encountered\nTraceback"}, batch_size=None, code="VERIFIER_DIDNT_RUN")),
    timed("llama", None, [0.0500, 0.0502, 0.0498, 0.0501, 0.0499]),
    json.dumps(rec("hf_Bert", "inductor", {}, batch_size=None, code="FAIL")),
    json.dumps(rec("hf_GPT2", "inductor", {}, batch_size=None, code="PASS")),
    json.dumps(rec("mobilenet_v2", "cudagraphs", {"error": "SKIP: dynamo=cudagraphs is in the skip list"}, batch_size=None)),
    timed("dcgan", None, DCGAN),
    '{"model": {"suite_name": "torchbench", "model_name": "squeezenet1_1"}, "experiment": {"accelerator": "cuda", "accelerator_model": "NVIDIA H200", "xla": null, "xla_flags": null, "dynamo": null, "torch_xla2": null, "test": "eval", "batch_size": 8}, "repeat": 6, "iterations_per_run": 1, "metrics": {"total_time": [0.03, 0.006, NaN, 0.006, 0.006, 0.006], "per_iter_time": [0.03, 0.006, NaN, 0.006, 0.006, 0.006]}, "timestamp": 1700000000.5, "verification_code": "VERIFIER_SKIPPED"}',
    "this line is not JSON",
    timed("timm_vision_transformer", None, [0.0070, 0.0071, 0.0069]),
]

GOLDEN_TABLE = (
    'model                    test  backend     batch  A median ms  B median ms  ratio        p  verdict       verify      note\n'
    '-----------------------  ----  ----------  -----  -----------  -----------  -----  -------  ------------  ----------  ------------------------------------------------------------\n'
    'alexnet                  eval  eager           8        4.000        4.400  1.100        -  SLOWER                    few samples\n'
    'BERT_pytorch             eval  eager           8      102.500      108.650  1.060    0.570  SAME                      not significant\n'
    'dcgan                    eval  eager           8        3.000        3.000  1.000    1.000  SAME\n'
    'dlrm                     eval  inductor        8       20.000        error                  BROKEN                    child exited with status 1: CUDA error: an illegal memory...\n'
    'hf_Bert                  eval  inductor     None                                            BROKEN        PASS->FAIL  verification PASS -> FAIL\n'
    'hf_GPT2                  eval  inductor     None                                            SAME          PASS        no timings\n'
    'llama                    eval  eager           8        error       50.000                  FIXED                     A: child killed by signal SIGSEGV\n'
    'mobilenet_v2             eval  cudagraphs   None         SKIP         SKIP                  BOTH_FAILED               SKIP: dynamo=cudagraphs is in the skip list\n'
    'resnet18                 eval  inductor       16        5.000        3.750  0.750  1.7e-04  FASTER\n'
    'resnet50                 eval  eager          32       10.050       12.060  1.200  1.8e-04  SLOWER\n'
    'shufflenet_v2_x1_0       eval  eager           8        2.010        2.312  1.150    0.002  SLOWER\n'
    'squeezenet1_1            eval  eager           8        6.000     unusable                  UNUSABLE                  B: metrics.per_iter_time holds NaN\n'
    'timm_vision_transformer  eval  eager           8            -        7.000                  NEW_IN_B\n'
    'vgg16                    eval  eager           8       30.000            -                  MISSING_IN_B\n'
    '-----------------------  ----  ----------  -----  -----------  -----------  -----  -------  ------------  ----------  ------------------------------------------------------------\n'
    'GEOMEAN                        eager                                        1.100                                     5 pairs\n'
    'GEOMEAN                        inductor                                     0.750                                     1 pair\n'
    'GEOMEAN                        all                                          1.032                                     6 pairs\n'
    'verdicts: SLOWER 3, BROKEN 2, FASTER 1, FIXED 1, SAME 3, MISSING_IN_B 1, NEW_IN_B 1, BOTH_FAILED 1, UNUSABLE 1\n'
)

GOLDEN_MARKDOWN = (
    '| model                   | test | backend    | batch | A median ms | B median ms | ratio |       p | verdict      | verify     | note                                                         |\n'
    '|:------------------------|:-----|:-----------|------:|------------:|------------:|------:|--------:|:-------------|:-----------|:-------------------------------------------------------------|\n'
    '| alexnet                 | eval | eager      |     8 |       4.000 |       4.400 | 1.100 |       - | SLOWER       |            | few samples                                                  |\n'
    '| BERT_pytorch            | eval | eager      |     8 |     102.500 |     108.650 | 1.060 |   0.570 | SAME         |            | not significant                                              |\n'
    '| dcgan                   | eval | eager      |     8 |       3.000 |       3.000 | 1.000 |   1.000 | SAME         |            |                                                              |\n'
    '| dlrm                    | eval | inductor   |     8 |      20.000 |       error |       |         | BROKEN       |            | child exited with status 1: CUDA error: an illegal memory... |\n'
    '| hf_Bert                 | eval | inductor   |  None |             |             |       |         | BROKEN       | PASS->FAIL | verification PASS -> FAIL                                    |\n'
    '| hf_GPT2                 | eval | inductor   |  None |             |             |       |         | SAME         | PASS       | no timings                                                   |\n'
    '| llama                   | eval | eager      |     8 |       error |      50.000 |       |         | FIXED        |            | A: child killed by signal SIGSEGV                            |\n'
    '| mobilenet_v2            | eval | cudagraphs |  None |        SKIP |        SKIP |       |         | BOTH_FAILED  |            | SKIP: dynamo=cudagraphs is in the skip list                  |\n'
    '| resnet18                | eval | inductor   |    16 |       5.000 |       3.750 | 0.750 | 1.7e-04 | FASTER       |            |                                                              |\n'
    '| resnet50                | eval | eager      |    32 |      10.050 |      12.060 | 1.200 | 1.8e-04 | SLOWER       |            |                                                              |\n'
    '| shufflenet_v2_x1_0      | eval | eager      |     8 |       2.010 |       2.312 | 1.150 |   0.002 | SLOWER       |            |                                                              |\n'
    '| squeezenet1_1           | eval | eager      |     8 |       6.000 |    unusable |       |         | UNUSABLE     |            | B: metrics.per_iter_time holds NaN                           |\n'
    '| timm_vision_transformer | eval | eager      |     8 |           - |       7.000 |       |         | NEW_IN_B     |            |                                                              |\n'
    '| vgg16                   | eval | eager      |     8 |      30.000 |           - |       |         | MISSING_IN_B |            |                                                              |\n'
    '| GEOMEAN                 |      | eager      |       |             |             | 1.100 |         |              |            | 5 pairs                                                      |\n'
    '| GEOMEAN                 |      | inductor   |       |             |             | 0.750 |         |              |            | 1 pair                                                       |\n'
    '| GEOMEAN                 |      | all        |       |             |             | 1.032 |         |              |            | 6 pairs                                                      |\n'
    '\n'
    'verdicts: SLOWER 3, BROKEN 2, FASTER 1, FIXED 1, SAME 3, MISSING_IN_B 1, NEW_IN_B 1, BOTH_FAILED 1, UNUSABLE 1\n'
)

GOLDEN_CSV = (
    'suite_name,model_name,test,backend,batch_size,accelerator_model,a_status,a_median_ms,a_samples,a_verification,b_status,b_median_ms,b_samples,b_verification,ratio,u,p_value,method,verdict,note\n'
    'torchbench,alexnet,eval,eager,8,NVIDIA H200,timed,4.0,3,VERIFIER_SKIPPED,timed,4.4,3,VERIFIER_SKIPPED,1.1,,,,SLOWER,few samples\n'
    'torchbench,BERT_pytorch,eval,eager,8,NVIDIA H200,timed,102.50000000000001,10,VERIFIER_SKIPPED,timed,108.64999999999999,10,VERIFIER_SKIPPED,1.0599999999999998,42.0,0.5704604728984778,asymptotic,SAME,not significant\n'
    'torchbench,dcgan,eval,eager,8,NVIDIA H200,timed,3.0,6,,timed,3.0,6,VERIFIER_SKIPPED,1.0,18.0,1.0,asymptotic,SAME,\n'
    'torchbench,dlrm,eval,inductor,8,NVIDIA H200,timed,20.0,5,VERIFIER_SKIPPED,error,,,VERIFIER_DIDNT_RUN,,,,,BROKEN,child exited with status 1: CUDA error: an illegal memory...\n'
    'torchbench,hf_Bert,eval,inductor,None,NVIDIA H200,untimed,,,PASS,untimed,,,FAIL,,,,,BROKEN,verification PASS -> FAIL\n'
    'torchbench,hf_GPT2,eval,inductor,None,NVIDIA H200,untimed,,,PASS,untimed,,,PASS,,,,,SAME,no timings\n'
    'torchbench,llama,eval,eager,8,NVIDIA H200,error,,,VERIFIER_DIDNT_RUN,timed,50.0,5,VERIFIER_SKIPPED,,,,,FIXED,A: child killed by signal SIGSEGV\n'
    'torchbench,mobilenet_v2,eval,cudagraphs,None,NVIDIA H200,skip,,,VERIFIER_SKIPPED,skip,,,VERIFIER_SKIPPED,,,,,BOTH_FAILED,SKIP: dynamo=cudagraphs is in the skip list\n'
    'torchbench,resnet18,eval,inductor,16,NVIDIA H200,timed,5.0,10,VERIFIER_SKIPPED,timed,3.75,10,VERIFIER_SKIPPED,0.75,100.0,0.00017070029451986173,asymptotic,FASTER,\n'
    'torchbench,resnet50,eval,eager,32,NVIDIA H200,timed,10.05,10,VERIFIER_SKIPPED,timed,12.06,10,VERIFIER_SKIPPED,1.2000000000000002,0.0,0.00017861448837368216,asymptotic,SLOWER,\n'
    'torchbench,shufflenet_v2_x1_0,eval,eager,8,NVIDIA H200,timed,2.0100000000000002,6,VERIFIER_SKIPPED,timed,2.3115,6,VERIFIER_SKIPPED,1.1500000000000001,0.0,0.0021645021645021645,exact,SLOWER,\n'
    'torchbench,squeezenet1_1,eval,eager,8,NVIDIA H200,timed,6.0,5,VERIFIER_SKIPPED,unusable,,,VERIFIER_SKIPPED,,,,,UNUSABLE,B: metrics.per_iter_time holds NaN\n'
    'torchbench,timm_vision_transformer,eval,eager,8,NVIDIA H200,absent,,,,timed,7.0,3,VERIFIER_SKIPPED,,,,,NEW_IN_B,\n'
    'torchbench,vgg16,eval,eager,8,NVIDIA H200,timed,30.0,3,VERIFIER_SKIPPED,absent,,,,,,,,MISSING_IN_B,\n'
    ',GEOMEAN,,eager,,,,,,,,,,,1.0998045887358034,,,,,5 pairs\n'
    ',GEOMEAN,,inductor,,,,,,,,,,,0.75,,,,,1 pair\n'
    ',GEOMEAN,,all,,,,,,,,,,,1.0318260387774933,,,,,6 pairs\n'
)


class CompareRunsTest(OutputDirTest):
    def setUp(self):
        super().setUp()
        self.a = os.path.join(self.out, "A.jsonl")
        self.b = os.path.join(self.out, "B.jsonl")
        with open(self.a, "w") as f:
            f.write("\n".join(A_LINES) + "\n")
        with open(self.b, "w") as f:
            f.write("\n".join(B_LINES) + "\n")

    # The golden texts and p-values below are of the Mann-Whitney rule (compare_runs' default before
    # the intervals, kept as --decide-by=mann-whitney); CompareRunsByIntervalTest covers the default.
    DECIDE_BY = ("--decide-by=mann-whitney",)

    def compare(self, *args, expect=None):
        proc = run(COMPARE_RUNS, self.a, self.b, *self.DECIDE_BY, *args, check=False)
        if expect is not None:
            self.assertEqual(proc.returncode, expect, proc.stderr)
        return proc

    def rows(self, *args):
        report = json.loads(self.compare("--format=json", *args).stdout)
        return report, {r["model_name"]: r for r in report["rows"]}

    def test_table_matches_golden_and_gates(self):
        proc = self.compare(expect=1)  # SLOWER and BROKEN rows: the nightly gate fails
        self.assertEqual(proc.stdout, GOLDEN_TABLE)
        self.assertIn(f"{self.b}:14: skipped: invalid JSON", proc.stderr)  # the corrupt line

    def test_markdown_and_csv_match_golden(self):
        self.assertEqual(self.compare("--format=markdown", expect=1).stdout, GOLDEN_MARKDOWN)
        self.assertEqual(self.compare("--format=csv", expect=1).stdout, GOLDEN_CSV)

    def test_verdicts(self):
        report, rows = self.rows()
        verdicts = {model: r["verdict"] for model, r in rows.items()}
        self.assertEqual(verdicts, {
            "resnet50": "SLOWER", "resnet18": "FASTER", "BERT_pytorch": "SAME", "shufflenet_v2_x1_0": "SLOWER",
            "alexnet": "SLOWER", "dlrm": "BROKEN", "llama": "FIXED", "hf_Bert": "BROKEN", "hf_GPT2": "SAME",
            "mobilenet_v2": "BOTH_FAILED", "vgg16": "MISSING_IN_B", "timm_vision_transformer": "NEW_IN_B",
            "dcgan": "SAME", "squeezenet1_1": "UNUSABLE"})
        self.assertTrue(report["regression"])
        # few samples: the threshold alone, no p-value
        self.assertEqual(rows["alexnet"]["note"], "few samples")
        self.assertIsNone(rows["alexnet"]["p_value"])
        # the later resnet50 line of B replaced the earlier (unchanged) one
        self.assertTrue(rows["resnet50"]["b"]["where"].endswith("B.jsonl:2"))
        self.assertAlmostEqual(rows["resnet50"]["ratio"], 1.2, places=12)
        self.assertLess(rows["resnet50"]["p_value"], 0.05)
        # noisy samples: a 6% change in the medians is not significant
        self.assertAlmostEqual(rows["BERT_pytorch"]["ratio"], 1.06, places=12)
        self.assertGreater(rows["BERT_pytorch"]["p_value"], 0.05)
        self.assertEqual(rows["shufflenet_v2_x1_0"]["method"], "exact")
        self.assertEqual(rows["resnet50"]["method"], "asymptotic")
        # the old record (no verification_code) and the error/verify records
        self.assertIsNone(rows["dcgan"]["a"]["verification_code"])
        self.assertEqual(rows["dlrm"]["b"]["detail"],
                         "child exited with status 1: CUDA error: an illegal memory access was encountered")
        self.assertEqual((rows["hf_Bert"]["a"]["verification_code"], rows["hf_Bert"]["b"]["verification_code"]),
                         ("PASS", "FAIL"))
        self.assertEqual(rows["squeezenet1_1"]["b"]["status"], "unusable")
        self.assertEqual(report["counts"]["SLOWER"], 3)

    def test_p_values_against_scipy(self):
        try:
            from scipy.stats import mannwhitneyu
        except ImportError:
            self.skipTest("scipy is not installed (scripts/install_dependencies.sh installs it into .venv); "
                          "the p-values are not checked against scipy.stats.mannwhitneyu")
        _, rows = self.rows()
        tested = [r for r in rows.values() if r["p_value"] is not None]
        self.assertEqual(len(tested), 5)
        for r in tested:
            expected = mannwhitneyu(r["a"]["samples_s"], r["b"]["samples_s"], alternative="two-sided")
            self.assertAlmostEqual(r["u"], float(expected.statistic), places=9, msg=r["model_name"])
            self.assertAlmostEqual(r["p_value"], float(expected.pvalue), delta=1e-12 + 1e-9 * expected.pvalue,
                                   msg=r["model_name"])

    def test_geomeans_against_python(self):
        report, rows = self.rows()

        def used(samples):  # our records' first sample is repeat 0, dropped
            return samples[1:] if len(samples) > 1 else samples

        def per_iter(lines, model):
            found = None
            for line in lines:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if record["model"]["model_name"] == model:
                    found = record  # a later line wins
            return used(found["metrics"]["per_iter_time"])

        ratios = {}
        for model in ["resnet50", "BERT_pytorch", "shufflenet_v2_x1_0", "alexnet", "dcgan", "resnet18"]:
            backend = rows[model]["backend"]
            ratio = statistics.median(per_iter(B_LINES, model)) / statistics.median(per_iter(A_LINES, model))
            ratios.setdefault(backend, []).append(ratio)
            ratios.setdefault("all", []).append(ratio)
        geomeans = {g["backend"]: g for g in report["geomeans"]}
        self.assertEqual(list(geomeans), ["eager", "inductor", "all"])
        for backend, values in ratios.items():
            expected = math.exp(sum(math.log(v) for v in values) / len(values))
            self.assertAlmostEqual(geomeans[backend]["ratio"], expected, places=12)
            self.assertEqual(geomeans[backend]["pairs"], len(values))

    def test_clear_improvement_passes_the_gate(self):
        proc = self.compare("-k", "resnet18", expect=0)
        self.assertIn("FASTER", proc.stdout)

    def test_threshold_lets_a_regression_pass(self):
        self.assertIn("SLOWER", self.compare("-k", "^resnet50$", expect=1).stdout)
        proc = self.compare("-k", "^resnet50$", "--threshold", "0.25", expect=0)
        self.assertIn("SAME", proc.stdout)
        # few samples: the threshold alone decides either way
        self.compare("-k", "alexnet", "--threshold=0.2", expect=0)

    def test_filters_backends_and_fail_on(self):
        _, rows = self.rows("--backend", "inductor", "-x", "dlrm")
        self.assertEqual(sorted(rows), ["hf_Bert", "hf_GPT2", "resnet18"])
        self.compare("--fail-on=none", expect=0)
        self.compare("-k", "vgg16|resnet18", expect=0)  # MISSING_IN_B does not gate by default
        self.compare("-k", "vgg16|resnet18", "--fail-on", "slower,missing_in_b", expect=1)

    def test_nothing_compared_fails_the_gate(self):
        # a nightly run that died (empty B) or ran elsewhere must not pass as "no regression"
        empty = os.path.join(self.out, "empty.jsonl")
        open(empty, "w").close()
        proc = run(COMPARE_RUNS, self.a, empty, check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("no configuration is in both runs", proc.stderr)
        self.assertIn("MISSING_IN_B", proc.stdout)
        proc = self.compare("-k", "vgg16", expect=1)  # only in A
        self.assertIn("nothing was compared", proc.stderr)
        self.compare("-k", "vgg16", "--fail-on=none", expect=0)

    def test_total_time_metric_and_directories(self):
        a_dir, b_dir = os.path.join(self.out, "last_night"), os.path.join(self.out, "tonight")
        for path, d in [(self.a, a_dir), (self.b, b_dir)]:
            os.makedirs(d)
            shutil.copy(path, os.path.join(d, "results.jsonl"))
        proc = run(COMPARE_RUNS, a_dir, b_dir, "--metric=total_time", "--format=json", "-k", "dcgan|resnet50",
                   check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        rows = {r["model_name"]: r for r in json.loads(proc.stdout)["rows"]}
        # the old record's total_time is null: no timings on A's side
        self.assertEqual(rows["dcgan"]["verdict"], "UNUSABLE")
        self.assertEqual(rows["dcgan"]["note"], "A has no total_time samples")
        self.assertEqual(rows["resnet50"]["verdict"], "SLOWER")

    def test_run_context_differences_head_the_output(self):
        a_dir, b_dir = os.path.join(self.out, "last_night"), os.path.join(self.out, "tonight")
        environment = {"torch": {"version": "2.11.0", "build": "2.11.0+cu130", "git_revision": "70d99e9",
                                 "cuda": "13.0"},
                       "threads": {"intra_op": 2, "inter_op": 2, "OMP_NUM_THREADS": None,
                                   "MKL_NUM_THREADS": None},
                       "cpu_affinity": "0-1"}
        context = {"command": ["experiment_runner", "--output-dirname=last_night"], "torch_version": "2.11.0",
                   "cuda_version": "13.0", "hostname": "build-1", "cpu_model": "EPYC", "gpus": [],
                   "started": 1.0, "benchmatrix_revision": "e204630", "run_environment": environment}
        pinned = json.loads(json.dumps(context))
        pinned.update(command=["experiment_runner", "--output-dirname=tonight"], started=2.0,
                      benchmatrix_revision="e204630-dirty",
                      earlier_sweeps=[{"command": ["x"], "started": 1.5, "hostname": "build-1"}])
        pinned["run_environment"]["threads"].update(intra_op=1, OMP_NUM_THREADS="1")
        pinned["run_environment"]["cpu_affinity"] = "0"
        for path, d, c in [(self.a, a_dir, context), (self.b, b_dir, pinned)]:
            os.makedirs(d)
            shutil.copy(path, os.path.join(d, "results.jsonl"))
            with open(os.path.join(d, "run_context.json"), "w") as f:
                json.dump(c, f)
        # the golden table is Mann-Whitney's (--decide-by=mann-whitney keeps it byte for byte)
        proc = run(COMPARE_RUNS, a_dir, b_dir, "--decide-by=mann-whitney", check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        # started and earlier_sweeps always differ: not shown
        self.assertEqual(proc.stdout, "run context: A -> B differs in 5 field(s):\n"
                         "  command: experiment_runner --output-dirname=last_night -> "
                         "experiment_runner --output-dirname=tonight\n"
                         "  benchmatrix_revision: e204630 -> e204630-dirty\n"
                         "  run_environment.threads.intra_op: 2 -> 1\n"
                         "  run_environment.threads.OMP_NUM_THREADS: null -> 1\n"
                         "  run_environment.cpu_affinity: 0-1 -> 0\n\n" + GOLDEN_TABLE)
        proc = run(COMPARE_RUNS, a_dir, b_dir, "--format=markdown", "--decide-by=mann-whitney",
                   check=False)
        self.assertTrue(proc.stdout.startswith("run context: A -> B differs in 5 field(s):\n\n"
                                               "- `command`: "), proc.stdout)
        self.assertTrue(proc.stdout.endswith(GOLDEN_MARKDOWN))
        # csv and json stay machine-readable: the differences go to stderr
        proc = run(COMPARE_RUNS, a_dir, b_dir, "--format=csv", "--decide-by=mann-whitney",
                   check=False)
        self.assertEqual(proc.stdout, GOLDEN_CSV)
        self.assertIn("run_environment.cpu_affinity: 0-1 -> 0", proc.stderr)
        # the same context on both sides says so; a results file given by name has none
        shutil.copy(os.path.join(a_dir, "run_context.json"), os.path.join(b_dir, "run_context.json"))
        proc = run(COMPARE_RUNS, a_dir, b_dir, "--decide-by=mann-whitney", check=False)
        self.assertEqual(proc.stdout, "run context: the same in A and B\n\n" + GOLDEN_TABLE)
        self.assertEqual(self.compare("--decide-by=mann-whitney", expect=1).stdout, GOLDEN_TABLE)

    def test_bad_input(self):
        proc = run(COMPARE_RUNS, self.a, os.path.join(self.out, "nonexistent.jsonl"), check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("nonexistent.jsonl does not exist", proc.stderr)
        proc = run(COMPARE_RUNS, self.a, self.out, check=False)  # a directory without results.jsonl
        self.assertEqual(proc.returncode, 2)
        self.assertIn("has no results.jsonl", proc.stderr)
        proc = self.compare("--no-such-flag", expect=2)
        self.assertIn("unrecognized arguments: --no-such-flag", proc.stderr)
        proc = run(COMPARE_RUNS, self.a, check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("expected two runs, A and B, got 1", proc.stderr)
        self.assertIn("invalid choice: 'xml'", self.compare("--format=xml", expect=2).stderr)
        self.assertIn("unknown verdict 'slow'", self.compare("--fail-on=slow", expect=2).stderr)
        self.assertIn("--threshold", self.compare("--threshold=-1", expect=2).stderr)
        self.assertIn("invalid --filter/--exclude regex", self.compare("-k", "(", expect=2).stderr)



def with_keys(line, **keys):
    record = json.loads(line)
    record.update(keys)
    return json.dumps(record)


def paired_key(median, low, high):
    return {"baseline": "eager", "order": "ABBA", "speedups": [median] * 6,
            "speedup": {"median": median, "low": low, "high": high, "confidence": 0.95, "count": 6}}


class CompareRunsByIntervalTest(OutputDirTest):
    """The default rule: the ratio of medians with its bootstrap interval, the verdict from the
    interval; paired speedups compared where both runs have them; each side's noise verdict."""

    def setUp(self):
        super().setUp()
        self.a = os.path.join(self.out, "A.jsonl")
        self.b = os.path.join(self.out, "B.jsonl")
        hf = [0.0030, 0.0031, 0.0029, 0.0030, 0.0032, 0.0030]
        a_lines = A_LINES + [
            with_keys(timed("hf_Bert", "cudagraphs", hf), paired=paired_key(1.92, 1.85, 2.01),
                      noise={"verdict": "quiet", "reasons": []}),
            with_keys(timed("llama", "cudagraphs", hf), paired=paired_key(1.40, 1.30, 1.52)),
        ]
        b_lines = B_LINES + [
            with_keys(timed("hf_Bert", "cudagraphs", hf), paired=paired_key(1.50, 1.45, 1.56),
                      noise={"verdict": "noisy", "reasons": ["load average 9.1 on 8 cores"]}),
            with_keys(timed("llama", "cudagraphs", hf), paired=paired_key(1.45, 1.33, 1.60)),
            with_keys(timed("dcgan", "cudagraphs", hf), noise={"verdict": 3}),
        ]
        a_lines.append(timed("dcgan", "cudagraphs", hf))
        with open(self.a, "w") as f:
            f.write("\n".join(a_lines) + "\n")
        with open(self.b, "w") as f:
            f.write("\n".join(b_lines) + "\n")

    def compare(self, *args, expect=None):
        proc = run(COMPARE_RUNS, self.a, self.b, *args, check=False)
        if expect is not None:
            self.assertEqual(proc.returncode, expect, proc.stderr)
        return proc

    def table_rows(self, text):
        lines = text.splitlines()
        header = re.split(r"\s{2,}", lines[0].strip())
        return header, {(cells[0], cells[2]): cells for cells in
                        (re.split(r"\s{2,}", line.strip()) for line in lines[2:]) if len(cells) > 3}

    def test_interval_column_and_verdicts(self):
        proc = self.compare(expect=1)
        header, rows = self.table_rows(proc.stdout)
        self.assertEqual(header[header.index("ratio") + 1], "95% interval")
        self.assertNotIn("p", header)
        # resnet50: B 20% slower in every sample; the interval lies above 1
        resnet50 = rows[("resnet50", "eager")]
        low, high = map(float, resnet50[header.index("95% interval")].split("–"))
        self.assertTrue(1 < low <= 1.2 <= high, resnet50)
        self.assertIn("SLOWER", resnet50)
        # BERT: a 6% change of noisy samples: the interval holds 1
        self.assertIn("within noise", rows[("BERT_pytorch", "eager")][-1])
        self.assertIn("SAME", rows[("BERT_pytorch", "eager")])
        self.assertIn("80% interval", self.compare("--alpha=0.2", expect=1).stdout.splitlines()[0])

    def test_a_broken_verification_carries_the_verifiers_message(self):
        hf = [0.0030, 0.0031, 0.0029, 0.0030, 0.0032, 0.0030]
        message = "output 0: max abs error 0.31 > atol 0.01 (rmse_vs_fp64 0.02)"
        with open(self.a, "w") as f:
            f.write(with_keys(timed("vgg16", "inductor", hf, code="PASS")) + "\n")
        with open(self.b, "w") as f:
            f.write(with_keys(timed("vgg16", "inductor", hf, code="FAIL"),
                              verification={"message": message + "\nsecond line"}) + "\n")
        report = json.loads(self.compare("--format=json", expect=1).stdout)
        [row] = report["rows"]
        self.assertEqual(row["verdict"], "BROKEN")
        self.assertEqual(row["note"], "verification PASS -> FAIL: " + message)

    def test_paired_speedups_compared_and_noise_carried(self):
        proc = self.compare("--format=json", expect=1)
        report = json.loads(proc.stdout)
        self.assertEqual(report["options"]["decide_by"], "interval")
        rows = {(r["model_name"], r["backend"]): r for r in report["rows"]}
        hf = rows[("hf_Bert", "cudagraphs")]
        self.assertEqual(hf["note"], "paired speedup over eager: A 1.92 [1.85–2.01], B 1.50 [1.45–1.56] (fell)")
        self.assertEqual(hf["a"]["paired_speedup"]["median"], 1.92)
        self.assertEqual((hf["a"]["noise"], hf["b"]["noise"]), ("quiet", "noisy"))
        self.assertEqual(hf["verdict"], "SAME")  # the same timings: only the paired speedup moved
        interval = hf["ratio_interval"]
        self.assertLessEqual(interval["low"], 1)
        self.assertGreaterEqual(interval["high"], 1)
        self.assertEqual(interval["confidence"], 0.95)
        llama = rows[("llama", "cudagraphs")]
        self.assertIn("(intervals overlap)", llama["note"])
        self.assertIsNone(rows[("resnet50", "eager")]["a"]["noise"])  # an older record: no verdict
        # a malformed noise key: the reader skips that line, saying why, so B has no dcgan record
        dcgan = rows[("dcgan", "cudagraphs")]
        self.assertEqual(dcgan["verdict"], "MISSING_IN_B")
        self.assertRegex(proc.stderr, r"skipped: .*noise")
        # mann-whitney keeps the old columns
        csv_header = self.compare("--format=csv", "--decide-by=mann-whitney", expect=1).stdout.splitlines()[0]
        self.assertIn(",ratio,u,p_value,method,verdict,note", csv_header)
        csv_header = self.compare("--format=csv", expect=1).stdout.splitlines()[0]
        self.assertIn(",ratio,ratio_low,ratio_high,confidence,verdict,note", csv_header)

class CompareRunsMemoryTest(OutputDirTest):
    """Peak memory (issue 26) on hand-made records: a faster B that needs 25% more device memory is
    MORE_MEMORY and fails the default gate; a rise within the repeats' spread, or below
    --memory-threshold, is not flagged; a fall is noted."""

    GIB = 1024 ** 3
    SAMPLES = [0.0030, 0.0031, 0.0029, 0.0030, 0.0032, 0.0030]

    def memory_line(self, model, samples, peaks):
        record = json.loads(timed(model, "inductor", samples))
        record["metrics"]["peak_device_allocated_bytes"] = [peaks[0]] + peaks
        return json.dumps(record)

    def write(self, a_lines, b_lines):
        self.a = os.path.join(self.out, "A.jsonl")
        self.b = os.path.join(self.out, "B.jsonl")
        for path, lines in ((self.a, a_lines), (self.b, b_lines)):
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")

    def compare(self, *args, expect):
        proc = run(COMPARE_RUNS, self.a, self.b, "--format=json", *args, check=False)
        self.assertEqual(proc.returncode, expect, proc.stderr)
        return {r["model_name"]: r for r in json.loads(proc.stdout)["rows"]}

    def test_memory_regression_is_flagged_as_a_slowdown_is(self):
        steady = [self.GIB] * 6
        spread = [self.GIB * f for f in (0.9, 1.0, 1.1, 1.0, 1.05, 0.95)]
        self.write(
            [self.memory_line("vgg16", self.SAMPLES, steady),
             self.memory_line("alexnet", self.SAMPLES, steady),
             self.memory_line("dcgan", self.SAMPLES, spread),
             self.memory_line("resnet18", self.SAMPLES, steady)],
            [self.memory_line("vgg16", scaled(self.SAMPLES, 0.8), [1.25 * self.GIB] * 6),  # faster
             self.memory_line("alexnet", self.SAMPLES, [1.05 * self.GIB] * 6),   # 5%: below 10%
             self.memory_line("dcgan", self.SAMPLES,                            # 12%, within spread
                              [self.GIB * f for f in (1.0, 1.12, 1.2, 1.05, 1.15, 1.1)]),
             self.memory_line("resnet18", self.SAMPLES, [0.5 * self.GIB] * 6)])  # half
        rows = self.compare(expect=1)
        vgg = rows["vgg16"]
        self.assertEqual(vgg["verdict"], "MORE_MEMORY")
        self.assertTrue(vgg["note"].startswith("peak device allocated +25%: 1 GiB -> 1.25 GiB"),
                        vgg["note"])
        self.assertAlmostEqual(vgg["memory_ratio"], 1.25)
        self.assertEqual(vgg["b"]["peak_memory"]["median_bytes"], 1.25 * self.GIB)
        self.assertEqual(rows["alexnet"]["verdict"], "SAME")
        self.assertEqual(rows["dcgan"]["verdict"], "SAME")
        self.assertNotIn("peak", rows["dcgan"]["note"])
        self.assertEqual(rows["resnet18"]["verdict"], "SAME")
        self.assertTrue(rows["resnet18"]["note"].startswith("peak device allocated -50%"))
        # the gate: --fail-on without more_memory passes the same runs; a higher threshold too
        self.compare("--fail-on=slower,broken", expect=0)
        self.assertEqual(self.compare("--memory-threshold=0.3", expect=0)["vgg16"]["verdict"],
                         "FASTER")


if __name__ == "__main__":
    unittest.main()
