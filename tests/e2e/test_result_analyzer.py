"""result_analyzer: the metric report (CSV, database CSV, JSONL) of crafted results files, compared
with golden text: success, inductor (compile_time_s, dict-valued metrics the original crashed on),
SKIP and error records, an old record variant (no timestamp, null total_time, NaN), an empty-metrics
record and a corrupt line."""
import json
import os
import tempfile
import unittest

from harness import OutputDirTest, run

ANALYZER = os.environ.get("RESULT_ANALYZER", "../../build/result_analyzer")


def rec(model, dynamo=None, test="eval", metrics=None, code="VERIFIER_SKIPPED", **extra):
    r = {"model": {"suite_name": "torchbench", "model_name": model},
         "experiment": {"accelerator": "cuda", "accelerator_model": "NVIDIA H200", "xla": None, "xla_flags": None,
                        "dynamo": dynamo, "torch_xla2": None, "keep_model_data_on_cuda": False, "test": test,
                        "batch_size": 8, "enable_functionalization": False},
         "repeat": 3, "iterations_per_run": 2, "metrics": metrics, "timestamp": 1700000000.5, "verification_code": code}
    r.update(extra)
    return r


def crafted_lines():
    lines = [
      json.dumps(rec("resnet18", metrics={"total_time": [0.5, 0.25, 0.75], "per_iter_time": [0.25, 0.125, 0.375]})),
      json.dumps(rec("resnet18", "inductor", metrics={"total_time": [0.2, 0.1, 0.3, 0.1], "per_iter_time": [0.1, 0.05, 0.15, 0.05],
           "compile_time_s": 61.5, "compile_cache_hit": False,
           "verification": {"tolerance": 0.01, "max_abs_error": 0.0}, "dynamo_counters": {"stats": {"calls": 1}}}, code="PASS")),
      json.dumps(rec("llama", "cudagraphs", metrics={"error": "SKIP: dynamo=cudagraphs needs accelerator=cuda"})),
      json.dumps(rec("dlrm", "inductor", metrics={"error": "child exited with status 1\nTraceback, \"quoted\""}, code="VERIFIER_DIDNT_RUN")),
      # an older record: experiment_name, outputs_file, no timestamp and no verification_code, total_time null
      '{"model": {"suite_name": "dummy", "model_name": "dummy"}, "experiment": {"experiment_name": "run_all", "accelerator": "cpu", "accelerator_model": "cpu", "xla": "PJRT", "xla_flags": null, "dynamo": "openxla", "torch_xla2": null, "test": "eval", "batch_size": null}, "repeat": 2, "iterations_per_run": 1, "metrics": {"total_time": null, "per_iter_time": [1.0, NaN], "trace_per_iter_time": [0.5, 0.5]}, "outputs_file": null}',
      json.dumps(rec("alexnet", metrics={})),
      "this line is not JSON",
    ]
    return lines


GOLDEN_CSV = 'timestamp,suite_name,model_name,accelerator,accelerator_model,xla,xla_flags,dynamo,torch_xla2,keep_model_data_on_cuda,test,batch_size,repeat,iterations_per_run,error_message,median_total_time,median_per_iter_time,xla_median_trace_per_iter_time,xla_compile_time,dynamo_compile_time,outputs_file,verification_code,min_total_time,max_total_time,mean_total_time,std_total_time,min_per_iter_time,max_per_iter_time,mean_per_iter_time,std_per_iter_time,compile_time_s,min_trace_per_iter_time,median_trace_per_iter_time,max_trace_per_iter_time,mean_trace_per_iter_time,std_trace_per_iter_time\n1700000000.5,torchbench,resnet18,cuda,NVIDIA H200,,,,,False,eval,8,3,2,,0.5,0.25,,-1.0,-1.0,,VERIFIER_SKIPPED,0.25,0.75,0.5,0.25,0.125,0.375,0.25,0.125,,,,,,\n1700000000.5,torchbench,resnet18,cuda,NVIDIA H200,,,inductor,,False,eval,8,3,2,,0.15000000000000002,0.07500000000000001,,-1.0,61.5,,PASS,0.1,0.3,0.16666666666666666,0.09428090415820632,0.05,0.15,0.08333333333333333,0.04714045207910316,61.5,,,,,\n1700000000.5,torchbench,llama,cuda,NVIDIA H200,,,cudagraphs,,False,eval,8,3,2,SKIP: dynamo=cudagraphs needs accelerator=cuda,-1.0,-1.0,-1.0,-1.0,-1.0,,VERIFIER_SKIPPED,,,,,,,,,,,,,,\n1700000000.5,torchbench,dlrm,cuda,NVIDIA H200,,,inductor,,False,eval,8,3,2,"child exited with status 1\nTraceback, ""quoted""",-1.0,-1.0,-1.0,-1.0,-1.0,,VERIFIER_DIDNT_RUN,,,,,,,,,,,,,,\n1600000000.0,dummy,dummy,cpu,cpu,PJRT,,openxla,,,eval,,2,1,,,,,,,,,,,,,,,,,,0.5,0.5,0.5,0.5,0.0\n1700000000.5,torchbench,alexnet,cuda,NVIDIA H200,,,,,False,eval,8,3,2,,,,,,,,VERIFIER_SKIPPED,,,,,,,,,,,,,,\n'

GOLDEN_JSONL_HIDDEN_ERRORS = '{"metrics": {"timestamp": 1700000000, "batch_size": 8, "repeat": 3, "iterations_per_run": 2, "min_total_time": 0.25, "median_total_time": 0.5, "max_total_time": 0.75, "mean_total_time": 0.5, "std_total_time": 0.25, "min_per_iter_time": 0.125, "median_per_iter_time": 0.25, "max_per_iter_time": 0.375, "mean_per_iter_time": 0.25, "std_per_iter_time": 0.125, "xla_compile_time": -1.0, "dynamo_compile_time": -1.0}, "dimensions": {"suite_name": "torchbench", "model_name": "resnet18", "accelerator": "cuda", "accelerator_model": "NVIDIA H200", "xla": "None", "dynamo": "None", "torch_xla2": "None", "test": "eval", "outputs_file": "None", "verification_code": "VERIFIER_SKIPPED", "run_status": "success"}}\n{"metrics": {"timestamp": 1700000000, "batch_size": 8, "repeat": 3, "iterations_per_run": 2, "min_total_time": 0.1, "median_total_time": 0.15000000000000002, "max_total_time": 0.3, "mean_total_time": 0.16666666666666666, "std_total_time": 0.09428090415820632, "min_per_iter_time": 0.05, "median_per_iter_time": 0.07500000000000001, "max_per_iter_time": 0.15, "mean_per_iter_time": 0.08333333333333333, "std_per_iter_time": 0.04714045207910316, "compile_time_s": 61.5, "xla_compile_time": -1.0, "dynamo_compile_time": 61.5}, "dimensions": {"suite_name": "torchbench", "model_name": "resnet18", "accelerator": "cuda", "accelerator_model": "NVIDIA H200", "xla": "None", "dynamo": "inductor", "torch_xla2": "None", "test": "eval", "outputs_file": "None", "verification_code": "PASS", "run_status": "success"}}\n{"metrics": {"timestamp": 1700000000, "batch_size": 8, "repeat": 3, "iterations_per_run": 2, "median_total_time": -1.0, "median_per_iter_time": -1.0, "xla_median_trace_per_iter_time": -1.0, "xla_compile_time": -1.0, "dynamo_compile_time": -1.0}, "dimensions": {"suite_name": "torchbench", "model_name": "llama", "accelerator": "cuda", "accelerator_model": "NVIDIA H200", "xla": "None", "dynamo": "cudagraphs", "torch_xla2": "None", "test": "eval", "outputs_file": "None", "verification_code": "VERIFIER_SKIPPED", "run_status": "failure"}}\n{"metrics": {"timestamp": 1700000000, "batch_size": 8, "repeat": 3, "iterations_per_run": 2, "median_total_time": -1.0, "median_per_iter_time": -1.0, "xla_median_trace_per_iter_time": -1.0, "xla_compile_time": -1.0, "dynamo_compile_time": -1.0}, "dimensions": {"suite_name": "torchbench", "model_name": "dlrm", "accelerator": "cuda", "accelerator_model": "NVIDIA H200", "xla": "None", "dynamo": "inductor", "torch_xla2": "None", "test": "eval", "outputs_file": "None", "verification_code": "VERIFIER_DIDNT_RUN", "run_status": "failure"}}\n{"metrics": {"timestamp": 1600000000, "batch_size": -1, "repeat": 2, "iterations_per_run": 1, "min_per_iter_time": NaN, "median_per_iter_time": NaN, "max_per_iter_time": NaN, "mean_per_iter_time": NaN, "std_per_iter_time": NaN, "min_trace_per_iter_time": 0.5, "median_trace_per_iter_time": 0.5, "max_trace_per_iter_time": 0.5, "mean_trace_per_iter_time": 0.5, "std_trace_per_iter_time": 0.0, "xla_compile_time": NaN, "dynamo_compile_time": NaN}, "dimensions": {"suite_name": "dummy", "model_name": "dummy", "accelerator": "cpu", "accelerator_model": "cpu", "xla": "PJRT", "dynamo": "openxla", "torch_xla2": "None", "test": "eval", "outputs_file": "None", "verification_code": "None", "run_status": "success"}}\n{"metrics": {"timestamp": 1700000000, "batch_size": 8, "repeat": 3, "iterations_per_run": 2}, "dimensions": {"suite_name": "torchbench", "model_name": "alexnet", "accelerator": "cuda", "accelerator_model": "NVIDIA H200", "xla": "None", "dynamo": "None", "torch_xla2": "None", "test": "eval", "outputs_file": "None", "verification_code": "VERIFIER_SKIPPED", "run_status": "success"}}\n'


class ResultAnalyzerTest(OutputDirTest):
    def setUp(self):
        super().setUp()
        with open(self.results, "w") as f:
            f.write("\n".join(crafted_lines()) + "\n")
        self.database = os.path.join(self.out, "db", "database.csv")

    def analyze(self, *args, check=True):
        return run(ANALYZER, f"--output-dirname={self.out}", f"--database={self.database}",
                   "--timestamp=1600000000", *args, check=check)

    def read(self, name):
        with open(os.path.join(self.out, name)) as f:
            return f.read()

    def test_csv_report_matches_golden_and_database_accumulates(self):
        proc = self.analyze()
        self.assertIn("results.jsonl:7: skipped", proc.stderr)  # the corrupt line is reported
        self.assertEqual(self.read("metric_report.csv"), GOLDEN_CSV)
        self.analyze()  # a second run appends rows, not a second header
        with open(self.database) as f:
            database = f.read()
        header, body = GOLDEN_CSV.split("\n", 1)
        self.assertEqual(database, header + "\n" + body + body)

    def test_database_is_widened_when_rows_bring_new_columns(self):
        # An older database (fewer columns, a quoted multi-line error cell) gains this report's
        # columns at the end of its header; its rows keep their cells, padded with empty ones.
        os.makedirs(os.path.dirname(self.database))
        old = 'timestamp,model_name,error_message\n1,x,"line one\nline, two"\n2,y,\n'
        with open(self.database, "w") as f:
            f.write(old)
        self.analyze()
        with open(self.database) as f:
            database = f.read()
        header, body = GOLDEN_CSV.split("\n", 1)
        new_columns = [c for c in header.split(",") if c not in ("timestamp", "model_name", "error_message")]
        self.assertEqual(database.split("\n", 1)[0],
                         "timestamp,model_name,error_message," + ",".join(new_columns))
        padding = "," * len(new_columns)
        self.assertTrue(database.startswith(
            database.split("\n", 1)[0] + "\n" + '1,x,"line one\nline, two"' + padding + "\n2,y," + padding + "\n"))
        import csv, io
        rows = list(csv.DictReader(io.StringIO(database)))
        golden = list(csv.DictReader(io.StringIO(GOLDEN_CSV)))
        self.assertEqual(len(rows), 2 + len(golden))
        self.assertEqual(rows[0]["error_message"], "line one\nline, two")
        for got, want in zip(rows[2:], golden):
            self.assertEqual({k: got[k] for k in want}, want)
        # A second report with the same columns appends, no rewrite of the older rows.
        self.analyze()
        with open(self.database) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 2 + 2 * len(golden))

    def test_database_that_is_not_csv_is_refused_untouched(self):
        os.makedirs(os.path.dirname(self.database))
        with open(self.database, "w") as f:
            f.write('timestamp,model_name\n1,"never closed\n')
        proc = self.analyze(check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("a quoted field is never closed", proc.stderr)
        with open(self.database) as f:
            self.assertEqual(f.read(), 'timestamp,model_name\n1,"never closed\n')

    def test_database_defaults_to_the_results_directory_not_the_working_one(self):
        # Run from another directory, as from a checkout (whose output/ is a source folder): the
        # rows go to <output-dirname>/database.csv and nothing is written where it runs.
        with tempfile.TemporaryDirectory(prefix="benchmatrix-cwd-") as cwd:
            run(os.path.abspath(ANALYZER), f"--output-dirname={self.out}", "--timestamp=1600000000", cwd=cwd)
            self.assertEqual(os.listdir(cwd), [])
        self.assertEqual(self.read("database.csv"), GOLDEN_CSV)
        self.assertEqual(self.read("metric_report.csv"), GOLDEN_CSV)
        self.assertIn("[default: <output-dirname>/database.csv]", run(ANALYZER, "--help").stdout)

    def test_jsonl_report_matches_golden(self):
        self.analyze("--output-format=jsonl", "--hide-errors")
        self.assertEqual(self.read("metric_report.jsonl"), GOLDEN_JSONL_HIDDEN_ERRORS)
        self.analyze("--output-format=jsonl")  # its own output is not read back as input
        rows = [json.loads(line) for line in self.read("metric_report.jsonl").splitlines()]
        self.assertEqual(len(rows), 6)
        self.assertEqual(rows[3]["error_message"], 'child exited with status 1\nTraceback, "quoted"')

    def test_this_runners_layout_reports_as_earlier_versions_did(self):
        # The crafted inductor record is an earlier benchmatrix version's (scalar compile_time_s, dicts
        # in metrics); this runner writes compile_time_s as a per-repeat list with the value in repeat
        # 0 and the rest in top-level keys. Both give the same row.
        self.analyze("--output-format=jsonl")
        earlier = [json.loads(line) for line in self.read("metric_report.jsonl").splitlines()][1]
        with open(self.results, "w") as f:
            f.write(json.dumps(rec("resnet18", "inductor", metrics={
                "total_time": [0.2, 0.1, 0.3, 0.1], "per_iter_time": [0.1, 0.05, 0.15, 0.05],
                "compile_time_s": [61.5, 0.0, 0.0, 0.0]}, code="PASS", compile={"cache_hit": False},
                dynamo_counters={"stats": {"calls": 1}},
                verification={"tolerance": 0.01, "max_abs_error": 0.0})) + "\n")
        self.analyze("--output-format=jsonl")
        [current] = [json.loads(line) for line in self.read("metric_report.jsonl").splitlines()]
        self.assertEqual(current, earlier)
        self.assertEqual(current["metrics"]["compile_time_s"], 61.5)

    def test_bad_arguments(self):
        proc = run(ANALYZER, "--output-dirname=/nonexistent", check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("--output-dirname /nonexistent is not a directory", proc.stderr)
        proc = run(ANALYZER, "--output-format=xml", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("invalid choice: 'xml'", proc.stderr)


if __name__ == "__main__":
    unittest.main()
