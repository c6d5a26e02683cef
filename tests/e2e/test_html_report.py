"""html_report: the self-contained HTML page of a crafted results directory (eager, inductor,
cudagraphs and torchscript records, eval and train, PASS/FAIL and other verifier codes, error and
SKIP records, a verify-only record, an old record variant, NaN samples, a corrupt line, a model name
with <&> characters and a run_context.json). The page is parsed as XML; its sections, numbers
recomputed here, escaping and SVG charts are checked; it must reference nothing on the network.
Then headless Chromium renders it: a screenshot of the requested size that is not blank, and a DOM
holding the charts. (Chromium: Debian's chromium package, installed by
scripts/install_dependencies.sh; that part is skipped, saying so, only when no binary exists.)"""
import datetime
import json
import math
import os
import re
import shutil
import statistics
import struct
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zlib

from harness import RUNNER, OutputDirTest, read_records, run

HTML_REPORT = os.environ.get("HTML_REPORT", "../../build/html_report")
ODD_NAME = 'Model<&>"x"'
T = 1795324126.25
T_UTC = datetime.datetime.fromtimestamp(T, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def rec(model, dynamo=None, test="eval", per_iter=None, metrics=None, code="VERIFIER_SKIPPED", batch_size=8,
        iterations=2):
    if metrics is None:
        metrics = {"total_time": [v * iterations for v in per_iter], "per_iter_time": per_iter}
    return {"model": {"suite_name": "torchbench", "model_name": model},
            "experiment": {"accelerator": "cuda", "accelerator_model": "NVIDIA H200", "xla": None, "xla_flags": None,
                           "dynamo": dynamo, "torch_xla2": None, "keep_model_data_on_cuda": False, "test": test,
                           "batch_size": batch_size, "enable_functionalization": False},
            "repeat": len(per_iter) if per_iter else 4, "iterations_per_run": iterations, "metrics": metrics,
            "timestamp": T, "verification_code": code}


# per_iter_time samples (seconds); repeat 0 is warm-up and is left out by default
SAMPLES = {
    ("resnet18", None, "eval"): [0.5, 0.010, 0.012, 0.011, 0.0105],
    ("resnet18", "inductor", "eval"): [0.9, 0.0050, 0.0056, 0.0052, 0.0049],
    ("resnet18", "cudagraphs", "eval"): [0.2, 0.0081, 0.0080, 0.0083, 0.0079],
    ("resnet18", "torchscript", "eval"): [float("nan"), 0.0095, float("nan"), 0.0101, 0.0098],
    (ODD_NAME, None, "eval"): [0.1, 0.0200, 0.0210, 0.0190],
    (ODD_NAME, "inductor", "eval"): [0.3, 0.0100, 0.0105, 0.0098],
    ("dlrm", None, "eval"): [0.03, 0.0030, 0.0031, 0.0032],
    ("alexnet", None, "eval"): [0.02, 0.0040, 0.0041, 0.0039],
    ("resnet18", None, "train"): [1.0, 0.040, 0.042, 0.041],
    ("resnet18", "cudagraphs", "train"): [0.4, 0.020, 0.021, 0.0205],
}
DLRM_ERROR = "child exited with status 1\nTraceback (most recent call last):\n  <frame> & more"


def crafted_lines():
    lines = []
    for (model, dynamo, test), samples in SAMPLES.items():
        code = "PASS" if model == ODD_NAME else "VERIFIER_SKIPPED"
        lines.append(json.dumps(rec(model, dynamo, test, samples, code=code)))
    lines += [
        # a verify-mode record (no timings): its verdict shows in the cell of the timing record
        json.dumps(rec("resnet18", "inductor", metrics={}, code="FAIL", batch_size=None)),
        json.dumps(rec("dlrm", "inductor", metrics={"error": DLRM_ERROR}, code="VERIFIER_DIDNT_RUN", batch_size=None)),
        json.dumps(rec("dlrm", "cudagraphs", metrics={"error": "SKIP: dynamo=cudagraphs cannot capture dlrm"},
                       batch_size=None)),
        json.dumps(rec("alexnet", "inductor", metrics={"error": "Traceback: eager raised"}, code="EAGER_FAILED",
                       batch_size=None)),
        json.dumps(rec("alexnet", "torchscript", metrics={"total_time": [float("nan")] * 3,
                                                          "per_iter_time": [float("nan")] * 3},
                       code="NONDETERMINISTIC_EAGER_RUN")),
        json.dumps(rec("resnet18", "torchscript", "train", metrics={"error": "SKIP"}, batch_size=None)),
        # an old record (§5.4): experiment_name, outputs_file, no timestamp, no verification_code, no
        # per_iter_time (total_time / iterations_per_run is used)
        '{"model": {"suite_name": "torchbench", "model_name": "vgg16"}, "experiment": {"experiment_name": "run_all", '
        '"accelerator": "cuda", "accelerator_model": "NVIDIA H200", "xla": null, "xla_flags": null, "dynamo": null, '
        '"torch_xla2": null, "test": "eval", "batch_size": 4}, "repeat": 3, "iterations_per_run": 2, '
        '"metrics": {"total_time": [0.5, 0.02, 0.03]}, "outputs_file": null}',
        # old and null: total_time null
        '{"model": {"suite_name": "torchbench", "model_name": "vgg16"}, "experiment": {"experiment_name": "run_all", '
        '"accelerator": "cuda", "accelerator_model": "NVIDIA H200", "xla": null, "xla_flags": null, "dynamo": "inductor", '
        '"torch_xla2": null, "test": "eval", "batch_size": 4}, "repeat": 3, "iterations_per_run": 2, '
        '"metrics": {"total_time": null}, "outputs_file": null}',
        "this line is not JSON {",
    ]
    return lines


CORRUPT_LINE = len(SAMPLES) + 9

RUN_CONTEXT = {"command": ["experiment_runner", "--suite-name=torchbench", "--dynamo", "inductor", "--filter", "res net"],
               "torch_version": "2.11.0", "cuda_version": None, "hostname": "gpu-<host>&1",
               "cpu_model": "AMD EPYC 9654", "started": 1795324126.2}


def format_ms(ms):
    """The report's 4 significant digits (at most 6 decimals)."""
    decimals = max(0, min(6, 3 - math.floor(math.log10(abs(ms)))))
    return f"{ms:.{decimals}f}"


def used_ms(samples, skip=1):
    first = min(skip, len(samples) - 1)
    return [v * 1e3 for v in samples[first:] if math.isfinite(v)]


def speedup(experiment, baseline):
    e, b = used_ms(experiment), used_ms(baseline)
    me, mb = statistics.median(e), statistics.median(b)
    se, sb = statistics.stdev(e), statistics.stdev(b)
    s = mb / me
    return s, s * math.sqrt((se / me) ** 2 + (sb / mb) ** 2)


def interval_of(text):
    """(median, low, high) of a cell's "median [low–high]" text."""
    match = re.match(r"([\d.]+)\s*\[([\d.]+)–([\d.]+)\]", text)
    assert match, f"no 'median [low–high]' in {text!r}"
    return match.groups()


def text_of(element):
    return "".join(element.itertext())


def png_info(path):
    """(width, height, distinct scanlines) of a PNG, from its chunks and decompressed image data."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color_type = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color_type]
    stride = 1 + width * channels * depth // 8
    assert len(raw) == stride * height, "image data does not match the header"
    rows = {raw[i:i + stride] for i in range(0, len(raw), stride)}
    return width, height, len(rows)


class HtmlReportTest(OutputDirTest):
    def setUp(self):
        super().setUp()
        with open(self.results, "w", encoding="utf-8") as f:
            f.write("\n".join(crafted_lines()) + "\n")
        with open(os.path.join(self.out, "run_context.json"), "w") as f:
            json.dump(RUN_CONTEXT, f)
        self.report = os.path.join(self.out, "report.html")

    def make(self, *args, check=True):
        return run(HTML_REPORT, f"--output-dirname={self.out}", *args, check=check)

    def page(self):
        with open(self.report, encoding="utf-8") as f:
            html = f.read()
        return html, ET.fromstring(html.replace("<!DOCTYPE html>", "", 1))

    def row(self, root, table_id, header):
        table = root.find(f".//table[@id='{table_id}']")
        self.assertIsNotNone(table, table_id)
        for tr in table.iter("tr"):
            cells = list(tr)
            if cells and text_of(cells[0]) == header:
                return cells
        self.fail(f"no row {header!r} in {table_id}")

    def test_page_sections_numbers_and_escaping(self):
        proc = self.make()
        self.assertIn(f"results.jsonl:{CORRUPT_LINE}: skipped", proc.stderr)
        self.assertIn(self.report, proc.stdout)
        html, root = self.page()  # well-formed: it parses as XML
        self.assertEqual(root.tag, "html")
        ids = {e.get("id") for e in root.iter() if e.get("id")}
        for section in ("context", "run-context", "summary", "verification", "test-eval", "test-train",
                        "models-eval", "models-train"):
            self.assertIn(section, ids)

        # run context from the records and from run_context.json, escaped
        context = text_of(root.find(".//section[@id='context']"))
        for expected in ("cuda — NVIDIA H200", "torchbench", "eval, train", "4, 8", T_UTC,
                         "1 unusable lines skipped"):
            self.assertIn(expected, context)
        run_context = {text_of(tr[0]): text_of(tr[1]) for tr in root.find(".//table[@id='run-context']")}
        self.assertEqual(run_context["command"],
                         "experiment_runner --suite-name=torchbench --dynamo inductor --filter 'res net'")
        self.assertEqual(run_context["torch_version"], "2.11.0")
        self.assertEqual(run_context["cuda_version"], "null")
        self.assertEqual(run_context["hostname"], "gpu-<host>&1")
        self.assertTrue(run_context["started"].startswith(f"1795324126.2 ({T_UTC})"))
        self.assertIn("gpu-&lt;host&gt;&amp;1", html)

        # the median and speedup of resnet18 on inductor, recomputed here
        cells = self.row(root, "models-eval", "resnet18")
        self.assertEqual(text_of(cells[1]), "8")
        eager_time, inductor_time = text_of(cells[2]), text_of(cells[5])
        eager = used_ms(SAMPLES[("resnet18", None, "eval")])
        # the median, its bootstrap 95% interval (inside the samples' range) and no noise verdict
        median, low, high = interval_of(eager_time)
        self.assertEqual(median, format_ms(statistics.median(eager)))
        self.assertTrue(min(eager) <= float(low) <= float(median) <= float(high) <= max(eager), eager_time)
        self.assertTrue(eager_time.endswith("noise —"), eager_time)
        self.assertIn(f"min {format_ms(min(eager))}, max {format_ms(max(eager))} ms", cells[2].get("title"))
        inductor = used_ms(SAMPLES[("resnet18", "inductor", "eval")])
        self.assertTrue(inductor_time.startswith(format_ms(statistics.median(inductor))), inductor_time)
        s, e = speedup(SAMPLES[("resnet18", "inductor", "eval")], SAMPLES[("resnet18", None, "eval")])
        # an unpaired speedup with its interval; inductor's samples all lie below eager's: faster
        speedup_median, speedup_low, speedup_high = interval_of(cells[6].text)
        self.assertEqual(speedup_median, f"{s:.2f}")
        self.assertGreater(float(speedup_low), 1)
        self.assertEqual(text_of(cells[6].find("span")), "unpaired · faster")
        self.assertIn("faster", cells[6].get("class"))
        self.assertEqual(cells[7].find("span").get("title"), "FAIL")  # the verify record's verdict
        # NaN samples are ignored: torchscript's median of its two finite samples past repeat 0
        ts = used_ms(SAMPLES[("resnet18", "torchscript", "eval")])
        self.assertTrue(text_of(cells[11]).startswith(format_ms(statistics.median(ts))))

        # the odd model name: escaped in the source, intact once parsed, charted
        self.assertNotIn(ODD_NAME, html)
        self.assertIn("Model&lt;&amp;&gt;&quot;x&quot;", html)
        odd = self.row(root, "models-eval", ODD_NAME)
        self.assertEqual(odd[4].find("span").get("title"), "PASS")

        # error and SKIP cells: the first line, the whole message as the tooltip
        dlrm = self.row(root, "models-eval", "dlrm")
        error = [c for c in dlrm if c.get("class") == "error"][0]
        self.assertEqual(text_of(error), "error: child exited with status 1")
        self.assertEqual(error.get("title"), DLRM_ERROR)
        skip = [c for c in dlrm if c.get("class") == "skip"][0]
        self.assertEqual(text_of(skip), "SKIP: dynamo=cudagraphs cannot capture dlrm")
        alexnet = self.row(root, "models-eval", "alexnet")
        alexnet_cells = [text_of(c) for c in alexnet]
        self.assertIn("no finite samples", alexnet_cells)  # torchscript: NaN only
        self.assertIn("no record", alexnet_cells)  # cudagraphs
        self.assertIn("error: Traceback: eager raised", alexnet_cells)
        self.assertIn("nondeterministic", alexnet_cells)
        # the old record: total_time / iterations_per_run, batch 4
        vgg = self.row(root, "models-eval", "vgg16")
        self.assertEqual(text_of(vgg[1]), "4")
        self.assertTrue(text_of(vgg[2]).startswith(format_ms(statistics.median([10.0, 15.0]))))

        # geomean (one model per backend here but resnet18 and the odd one on inductor)
        s2, _ = speedup(SAMPLES[(ODD_NAME, "inductor", "eval")], SAMPLES[(ODD_NAME, None, "eval")])
        geomean = self.row(root, "geomean", "Inductor")
        self.assertTrue(text_of(geomean[1]).startswith(f"{math.sqrt(s * s2):.2f} ("), text_of(geomean[1]))
        self.assertNotIn("±", text_of(geomean[1]))  # no interval for a geomean: counts instead
        self.assertIn("2 faster, 0 slower, 0 within noise", text_of(geomean[1]))
        self.assertIn("(2 models)", text_of(geomean[1]))
        self.assertIn("(1 model)", text_of(self.row(root, "geomean", "CUDAGraphs")[1]))

        # verification counts and pass rates
        verification = root.find(".//table[@id='verification-table']")
        headers = [text_of(th) for th in verification.find("thead/tr")]
        rows = {(text_of(tr[0]), text_of(tr[1])): dict(zip(headers, map(text_of, tr)))
                for tr in verification.find("tbody")}
        inductor_eval = rows[("Inductor", "eval")]
        self.assertEqual((inductor_eval["PASS"], inductor_eval["FAIL"], inductor_eval["EAGER_FAILED"]), ("1", "1", "1"))
        self.assertEqual(inductor_eval["errors"], "1")
        self.assertEqual(inductor_eval["(none)"], "1")  # the old vgg16 record
        self.assertEqual(inductor_eval["pass rate"], "1/3 (33.3%)")
        self.assertEqual(rows[("CUDAGraphs", "eval")]["SKIP"], "1")
        self.assertEqual(rows[("TorchScript", "train")]["SKIP"], "1")
        self.assertEqual(rows[("Eager", "eval")]["pass rate"], "1/1 (100.0%)")
        self.assertEqual(rows[("CUDAGraphs", "train")]["pass rate"], "not verified")

        # charts: a speedup chart per test with error bars and the 1.0 line, and a distribution per model
        svg = "{http://www.w3.org/2000/svg}"
        charts = list(root.iter(svg + "svg"))
        speedups = [f for f in root.iter("figure") if "speedup-chart" in f.get("class")]
        self.assertEqual(len(speedups), 2)
        eval_chart = speedups[0].find(svg + "svg")
        self.assertEqual(len(eval_chart.findall(f".//{svg}line[@class='reference']")), 1)
        self.assertGreaterEqual(len(eval_chart.findall(f".//{svg}line[@class='error-bar']")), 4)
        bar_titles = [text_of(t) for t in eval_chart.iter(svg + "title")]
        self.assertIn(f"resnet18, Inductor: {s:.6g}", bar_titles)
        self.assertTrue(any(t.startswith(ODD_NAME + ", Inductor") for t in bar_titles))
        small = [f for f in root.iter("figure") if "small" in f.get("class")]
        self.assertEqual(len(small), 5 + 1)  # eval: resnet18, odd, dlrm, alexnet, vgg16; train: resnet18
        resnet = small[[text_of(f.find(f"{svg}svg/{svg}text")) for f in small].index("resnet18")]
        points = resnet.findall(f".//{svg}circle[@class='point']")
        self.assertEqual(len(points), 4 + 4 + 4 + 3)  # every repeat past the first, NaN left out
        self.assertEqual(len(charts), 2 + 6)

        # nothing on the network: the SVG namespace is the only URL, and no script or external link
        self.assertEqual(set(re.findall(r"https?://[^\s\"'<>]*", html)), {"http://www.w3.org/2000/svg"})
        self.assertNotIn("<script", html)
        self.assertNotIn("<link", html)
        self.assertEqual(sorted(os.listdir(self.out)), ["report.html", "results.jsonl", "run_context.json"])

    def test_flags_baseline_skip_repeats_output_and_title(self):
        other = os.path.join(self.out, "sub", "page.html")
        os.makedirs(os.path.dirname(other))
        self.make(f"--output={other}", "--title=Nightly <H200>", "--baseline=inductor", "--skip-repeats=0")
        self.assertFalse(os.path.exists(self.report))
        self.report = other
        html, root = self.page()
        self.assertEqual(text_of(root.find(".//h1")), "Nightly <H200>")
        cells = self.row(root, "models-eval", "resnet18")
        self.assertEqual([text_of(c) for c in root.find(".//table[@id='models-eval']/thead/tr")][2], "Inductor")
        eager = [v * 1e3 for v in SAMPLES[("resnet18", None, "eval")]]
        eager_cell = text_of(cells[5])  # eager is the second backend now
        self.assertTrue(eager_cell.startswith(format_ms(statistics.median(eager))), eager_cell)
        self.assertIn("Geomean speedup over Inductor", html)

    def test_accelerators_get_their_own_tables_and_old_codes_count_as_not_verified(self):
        # experiment_runner's default --accelerator list gives cpu and cuda records in one file: a
        # cpu eager time must never become the baseline of a cuda inductor speedup.
        cuda_eager = rec("resnet18", per_iter=[0.5, 0.010, 0.010, 0.010])
        cuda_inductor = rec("resnet18", "inductor", per_iter=[0.5, 0.005, 0.005, 0.005])
        cpu_eager = rec("resnet18", per_iter=[1.0, 0.500, 0.500, 0.500])
        cpu_eager["experiment"].update(accelerator="cpu", accelerator_model="AMD EPYC 7B13")
        old = rec("alexnet", per_iter=[0.1, 0.004, 0.004, 0.004], code="CANNOT_PROCEED_WITH_VERIFICATION")
        with open(self.results, "w") as f:
            f.write("\n".join(json.dumps(r) for r in (cuda_eager, cuda_inductor, cpu_eager, old)) + "\n")
        self.make()
        html, root = self.page()
        cuda_cells = self.row(root, "models-eval-1", "resnet18")
        self.assertEqual(text_of(cuda_cells[6]), "2.00 [2.00–2.00]unpaired · faster")
        cpu_cells = self.row(root, "models-eval-2", "resnet18")
        self.assertTrue(text_of(cpu_cells[2]).startswith("500.0"), text_of(cpu_cells[2]))
        self.assertEqual(len(cpu_cells), 5)  # model, batch, eager's three: no inductor on the cpu
        titles = [text_of(h) for h in root.iter("h2")]
        self.assertIn("eval (inference) — cuda — NVIDIA H200", titles)
        self.assertIn("eval (inference) — cpu — AMD EPYC 7B13", titles)
        pass_rate = self.row(root, "verification-table", "Eager")[-1]
        self.assertEqual(text_of(pass_rate), "not verified")  # CANNOT_PROCEED_WITH_VERIFICATION compared nothing

    def test_without_run_context_and_with_a_broken_one(self):
        os.remove(os.path.join(self.out, "run_context.json"))
        self.make()
        html, root = self.page()
        self.assertIn("No run_context.json", text_of(root.find(".//section[@id='context']")))
        with open(os.path.join(self.out, "run_context.json"), "w") as f:
            f.write("{not json")
        proc = self.make()
        self.assertIn("run_context.json skipped", proc.stderr)
        html, root = self.page()
        self.assertIn("run_context.json could not be used", text_of(root.find(".//section[@id='context']")))

    def test_missing_results_is_an_error_and_writes_nothing(self):
        os.remove(self.results)
        proc = self.make(check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("results.jsonl does not exist", proc.stderr)
        self.assertEqual(os.listdir(self.out), ["run_context.json"])
        proc = run(HTML_REPORT, "--output-dirname=" + os.path.join(self.out, "nope"), check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("is not a directory", proc.stderr)
        proc = self.make("--skip-repeats=x", check=False)
        self.assertEqual(proc.returncode, 2)

    def test_an_existing_report_is_replaced_whole(self):
        with open(self.report, "w") as f:
            f.write("old")
        self.make()
        html, _ = self.page()
        self.assertTrue(html.startswith("<!DOCTYPE html>") and html.endswith("</html>\n"))
        os.remove(self.results)
        self.make(check=False)  # fails: the previous report stays as it was
        self.assertEqual(self.page()[0], html)


def paired_key(median, low, high, count=4):
    return {"baseline": "eager", "order": "ABBA", "speedups": [median] * count,
            "speedup": {"median": median, "low": low, "high": high, "confidence": 0.95, "count": count}}


class TrustFiguresTest(OutputDirTest):
    """Records of the trust round (issue 24): paired speedups, noise verdicts and --profile-cupti
    busy times, as a user sees them on the page: each speedup's interval and kind, colour only when
    the interval excludes 1, the noise badge with its reasons, the GPU-busy figure."""

    def setUp(self):
        super().setUp()
        records = []
        # bert: a paired cudagraphs record whose interval excludes 1; quiet; CUPTI figures
        bert = rec("bert", "cudagraphs", per_iter=[0.3, 0.0050, 0.0051, 0.0052, 0.0050])
        bert["metrics"].update(cupti_per_iter_busy_time_s=[0.004, 0.0045, 0.0046, 0.0045, 0.0044],
                               cupti_per_iter_time_s=[0.006, 0.0050, 0.0050, 0.0050, 0.0050],
                               baseline_per_iter_time=[0.5, 0.0095, 0.0097, 0.0096, 0.0098])
        bert["paired"] = paired_key(1.92, 1.85, 2.01)
        bert["noise"] = {"verdict": "quiet", "reasons": []}
        records += [rec("bert", per_iter=[0.5, 0.009, 0.010, 0.011, 0.010]), bert]
        # llama: paired, but its interval holds 1; its unpaired eager would say otherwise
        llama = rec("llama", "cudagraphs", per_iter=[0.3, 0.0040, 0.0041, 0.0042, 0.0040])
        llama["paired"] = paired_key(1.03, 0.97, 1.08)
        records += [rec("llama", per_iter=[0.5, 0.010, 0.010, 0.010, 0.010]), llama]
        # resnet: unpaired inductor whose samples overlap eager's: within noise; noisy with reasons
        resnet = rec("resnet", "inductor", per_iter=[0.9, 0.0102, 0.0115, 0.0108, 0.0112])
        resnet["noise"] = {"verdict": "noisy", "reasons": ["repeats spread 12% (> 5%)", "load average 9.1 on 8 cores"]}
        # CUPTI busy without the pass's own wall time (older records): the same rule
        resnet["metrics"]["cupti_per_iter_busy_time_s"] = [0.009, 0.0099, 0.0099, 0.0099, 0.0099]
        records += [rec("resnet", per_iter=[0.5, 0.010, 0.012, 0.011, 0.0105]), resnet]
        broken = rec("vgg", "cudagraphs", per_iter=[0.3, 0.004, 0.004])
        broken["paired"] = {"baseline": "eager", "speedup": {"median": 2.0}}
        records.append(broken)
        with open(self.results, "w") as f:
            f.write("\n".join(json.dumps(r) for r in records) + "\n")

    def cells(self, root, model):
        table = root.find(".//table[@id='models-eval']")
        return next(list(tr) for tr in table.iter("tr") if list(tr) and text_of(list(tr)[0]) == model)

    def test_speedup_kinds_colours_noise_and_gpu_busy(self):
        proc = run(HTML_REPORT, f"--output-dirname={self.out}")
        self.assertIn("skipped: 'paired.order': missing (a paired record has it)", proc.stderr)
        with open(os.path.join(self.out, "report.html"), encoding="utf-8") as f:
            root = ET.fromstring(f.read().replace("<!DOCTYPE html>", "", 1))
        header = [text_of(th) for th in root.find(".//table[@id='models-eval']/thead/tr")]
        self.assertEqual(header[2:], ["Eager", "Inductor", "CUDAGraphs"])
        # columns: model, batch, eager (time, speedup, verify), inductor (...; one "no record" cell
        # where a model has none), cudagraphs (...)
        bert = self.cells(root, "bert")
        self.assertEqual(bert[7].text, "1.92 [1.85–2.01]")  # the record's paired.speedup as stored
        self.assertEqual(text_of(bert[7].find("span")), "paired · faster")
        self.assertIn("faster", bert[7].get("class"))
        self.assertIn("paired", bert[7].get("title"))
        busy = bert[6].find("span[@class='gpu-busy']")
        # median busy 4.5 ms / median timed 5.05 ms; not the CUPTI pass's own (traced) 5.0 ms
        self.assertEqual(text_of(busy), "GPU busy 0.89")
        self.assertEqual(text_of(bert[6].find("span[@class='noise quiet']")), "noise quiet")

        llama = self.cells(root, "llama")
        self.assertEqual(llama[7].text, "1.03 [0.97–1.08]")
        self.assertEqual(text_of(llama[7].find("span")), "paired · within noise")
        self.assertIn("within-noise", llama[7].get("class"))
        self.assertNotIn("faster", llama[7].get("class"))

        resnet = self.cells(root, "resnet")
        self.assertNotIn("faster", resnet[6].get("class"))
        self.assertNotIn("slower", resnet[6].get("class"))
        self.assertEqual(text_of(resnet[6].find("span")), "unpaired · within noise")
        median, low, high = interval_of(resnet[6].text)
        self.assertTrue(float(low) <= 1 <= float(high), resnet[6].text)
        noisy = resnet[5].find("span[@class='noise noisy']")
        self.assertEqual(text_of(noisy), "noise noisy")
        self.assertEqual(noisy.get("title"), "repeats spread 12% (> 5%)\nload average 9.1 on 8 cores")
        busy = resnet[5].find("span[@class='gpu-busy']")
        self.assertEqual(text_of(busy), "GPU busy 0.90")  # 9.9 ms busy / median 11.0 ms timed
        self.assertIn("timed repeats", busy.get("title"))
        # eager cells carry no noise key: a dash
        self.assertEqual(text_of(bert[2].find("span[@class='noise none']")), "noise —")

        geomean = self.row_text(root, "CUDAGraphs")
        self.assertIn("1 faster, 0 slower, 1 within noise; 2 paired", geomean)
        self.assertNotIn("±", geomean)

    def row_text(self, root, backend):
        table = root.find(".//table[@id='geomean']")
        return next(text_of(tr) for tr in table.iter("tr") if list(tr) and text_of(list(tr)[0]) == backend)


class MemorySectionTest(OutputDirTest):
    """Records with memory-pass figures (issue 26): the Peak memory section gives each backend's
    peak and the compression ratio against the baseline, red below 0.9, and a GEOMEAN row."""

    def test_peaks_ratios_and_flag(self):
        gib = 1024 ** 3
        records = []
        for dynamo, peak in ((None, 2 * gib), ("inductor", gib), ("cudagraphs", 2.5 * gib)):
            record = rec("resnet18", dynamo, per_iter=[0.5, 0.010, 0.011, 0.012])
            record["metrics"]["peak_device_allocated_bytes"] = [9 * gib, peak, peak, peak]
            records.append(record)
        records.append(rec("alexnet", per_iter=[0.5, 0.010, 0.011, 0.012]))  # no memory figures
        with open(self.results, "w") as f:
            f.write("\n".join(json.dumps(r) for r in records) + "\n")
        run(HTML_REPORT, f"--output-dirname={self.out}")
        with open(os.path.join(self.out, "report.html"), encoding="utf-8") as f:
            root = ET.fromstring(f.read().replace("<!DOCTYPE html>", "", 1))
        section = root.find(".//section[@id='memory']")
        self.assertIsNotNone(section)
        rows = {text_of(tr[1]): tr for tr in section.iter("tr") if tr.find("th") is not None and
                tr.find("td") is not None}
        self.assertEqual(set(rows), {"resnet18", "GEOMEAN"})
        resnet = [text_of(td) for td in rows["resnet18"]][2:]
        self.assertEqual(resnet, ["2 GiB", "1 GiB", "2.5 GiB", "2.00", "0.80"])
        self.assertIn("slower", rows["resnet18"][6].get("class"))  # 0.80: below 0.9
        self.assertNotIn("slower", rows["resnet18"][5].get("class"))
        self.assertEqual([text_of(td) for td in rows["GEOMEAN"]][5:], ["2.00", "0.80"])


class SummaryTableAgreesWithReportTest(OutputDirTest):
    """The table experiment_runner prints at the end of a sweep and the HTML report of its results
    count the same repeats (repeat 0 is warm-up), so they show one median per record."""

    def test_summary_table_and_report_give_the_same_median(self):
        proc = run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=None",
                   "--test=eval", "--repeat=4", "--iterations-per-run=2", f"--output-dirname={self.out}")
        [record] = read_records(self.results)
        median_ms = statistics.median(used_ms(record["metrics"]["per_iter_time"]))
        # The summary table: header, dashes, one row; columns two or more spaces apart.
        lines = proc.stdout.splitlines()
        top = next(i for i, line in enumerate(lines) if "per-iter median ms" in line)
        row = dict(zip(re.split(r"\s{2,}", lines[top].strip()), re.split(r"\s{2,}", lines[top + 2].strip())))
        self.assertEqual(row["model"], "dummy")
        self.assertEqual(row["per-iter median ms"], f"{median_ms:.3f}")
        run(HTML_REPORT, f"--output-dirname={self.out}")
        with open(os.path.join(self.out, "report.html"), encoding="utf-8") as f:
            root = ET.fromstring(f.read().replace("<!DOCTYPE html>", "", 1))
        dummy = next(tr for tr in root.find(".//table[@id='models-eval']").iter("tr")
                     if list(tr) and text_of(list(tr)[0]) == "dummy")
        # The same median (repeats 1-3), each at its own precision.
        self.assertEqual(list(dummy)[2].text, format_ms(median_ms))


def chromium_binary():
    for name in (os.environ.get("CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


@unittest.skipIf(chromium_binary() is None,
                 "no chromium binary (Debian's chromium package; scripts/install_dependencies.sh installs it)")
class HtmlReportInChromiumTest(OutputDirTest):
    WIDTH, HEIGHT = 1400, 3000

    def chromium(self, *args):
        with tempfile.TemporaryDirectory(prefix="benchmatrix-chromium-") as profile:
            return subprocess.run([chromium_binary(), "--headless", "--no-sandbox", "--disable-gpu",
                                   f"--user-data-dir={profile}", "--hide-scrollbars", *args],
                                  capture_output=True, text=True, timeout=180, check=False)

    def test_renders_with_charts_and_screenshot(self):
        with open(self.results, "w", encoding="utf-8") as f:
            f.write("\n".join(crafted_lines()) + "\n")
        with open(os.path.join(self.out, "run_context.json"), "w") as f:
            json.dump(RUN_CONTEXT, f)
        run(HTML_REPORT, f"--output-dirname={self.out}")
        url = "file://" + os.path.join(self.out, "report.html")
        shot = os.path.join(self.out, "screenshot.png")
        proc = self.chromium(f"--screenshot={shot}", f"--window-size={self.WIDTH},{self.HEIGHT}", url)
        self.assertTrue(os.path.exists(shot), f"no screenshot; chromium said:\n{proc.stderr[-3000:]}")
        width, height, distinct_rows = png_info(shot)
        self.assertEqual((width, height), (self.WIDTH, self.HEIGHT))
        self.assertGreater(distinct_rows, 300)  # tables, text and charts, not one colour
        try:
            from PIL import Image  # a second look when Pillow is there
            with Image.open(shot) as image:
                colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
                self.assertGreater(len(colours), 50)
                # the charts' palette is on screen (tab10 blue and orange bars, boxes or dots)
                present = {c for _, c in colours}
                self.assertIn((0x1f, 0x77, 0xb4), present)
                self.assertIn((0xff, 0x7f, 0x0e), present)
        except ImportError:
            pass
        dom = self.chromium("--dump-dom", url)
        self.assertEqual(dom.returncode, 0, dom.stderr[-3000:])
        self.assertEqual(dom.stdout.count("<svg"), 8)
        self.assertIn("Per-model results", dom.stdout)
        self.assertIn('class="bar"', dom.stdout)
        self.assertIn('class="point"', dom.stdout)


if __name__ == "__main__":
    unittest.main()


# --- comparison with a baseline night, and trends across nights (issue 27) ----------------------

REGRESSION_GATE = os.environ.get("REGRESSION_GATE", "../../build/regression_gate")
NIGHTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "nights")
PLANTED_MODELS = {"resnet18", "alexnet"}  # slowed 3-6x in night_9 and night_10 (test_regression_gate)


def model_of(config):
    return config.split("/")[1]


def config_of(record):
    """regression_gate's config text of a fixture record."""
    e = record["experiment"]
    return (f"{record['model']['suite_name']}/{record['model']['model_name']}/{e['test']}/"
            f"{e['dynamo'] or 'eager'}/bs{e['batch_size']}/{e['accelerator']}:{e['accelerator_model']}")


class HtmlReportNightsTest(OutputDirTest):
    """html_report --compare-to and --history on the recorded nights of tests/e2e/fixtures/nights
    (night_1..8: no change; night_9, night_10: resnet18 and alexnet slowed 3-6x). The verdicts on
    the page must be the regression gate's own, row for row."""

    def setUp(self):
        super().setUp()
        for k in range(1, 11):
            shutil.copytree(os.path.join(NIGHTS, f"night_{k}"), self.night(f"night_{k}"))
        self.db = os.path.join(self.out, "history.sqlite")

    def night(self, name):
        return os.path.join(self.out, name)

    def report(self, *args, expect=0):
        proc = run(HTML_REPORT, *args, check=False)
        self.assertEqual(proc.returncode, expect, proc.stdout + proc.stderr)
        return proc

    def page(self, path):
        with open(path, encoding="utf-8") as f:
            return ET.fromstring(f.read().replace("<!DOCTYPE html>", "", 1))

    def gate_verdicts(self, *args):
        verdict_json = os.path.join(self.out, "verdict.json")
        run(REGRESSION_GATE, "check", *args, "--no-confirm", "--verdict-json", verdict_json, check=False)
        with open(verdict_json, encoding="utf-8") as f:
            return {c["config"]: c["verdict"] for c in json.load(f)["configs"]}

    def comparison_rows(self, root):
        table = root.find(".//table[@id='comparison-table']")
        self.assertIsNotNone(table, "no comparison table")
        return {tr.get("data-config"): tr for tr in table.find("tbody")}

    def import_nights(self, *names):
        run(REGRESSION_GATE, "import", "--db", self.db, *[self.night(n) for n in names])

    def test_planted_night_against_a_quiet_night_marks_the_slowed_configs(self):
        out = os.path.join(self.out, "compare.html")
        self.report(f"--output-dirname={self.night('night_9')}", f"--compare-to={self.night('night_8')}",
                    f"--output={out}")
        root = self.page(out)
        rows = self.comparison_rows(root)
        gate = self.gate_verdicts("--baseline", self.night("night_8"), self.night("night_9"))
        # one row per config, each with the gate's verdict
        self.assertEqual({c: tr.get("data-verdict") for c, tr in rows.items()}, gate)
        self.assertEqual(len(rows), 8)
        tonight = {config_of(r): r for r in read_records(os.path.join(self.night("night_9"), "results.jsonl"))}
        baseline = {config_of(r): r for r in read_records(os.path.join(self.night("night_8"), "results.jsonl"))}
        for config, tr in rows.items():
            cells = tr.findall("td")
            verdict = tr.get("data-verdict")
            self.assertEqual(text_of(cells[6]), verdict)
            # the medians: the counted repeats' (repeat 0 left out), in ms
            for cell, record in ((cells[3], baseline[config]), (cells[4], tonight[config])):
                median = statistics.median(used_ms(record["metrics"]["per_iter_time"]))
                self.assertEqual(interval_of(text_of(cell))[0], format_ms(median), config)
            ratio, low, high = map(float, interval_of(text_of(cells[5])))
            self.assertLessEqual(low, ratio)
            self.assertLessEqual(ratio, high)
            self.assertIn("unpaired", text_of(cells[5]))
            # a row is coloured only when the verdict is a regression; the ratio only when its
            # interval excludes 1
            self.assertEqual(tr.get("class"), "regression" if verdict == "SLOWER" else None, config)
            expected_ratio_class = "slower" if low > 1 else "faster" if high < 1 else "within-noise"
            self.assertIn(expected_ratio_class, cells[5].get("class").split(), config)
            if model_of(config) in PLANTED_MODELS:
                self.assertEqual(verdict, "SLOWER", config)
                self.assertGreater(low, 2, config)
            self.assertEqual(text_of(cells[8]).split(), ["PASS", "→", "PASS"])
        self.assertIn("SLOWER", text_of(root.find(".//p[@id='comparison-counts']")))
        # a SAME row whose interval excludes 1 keeps its colour off (the verdict decides the row)
        dcgan = rows["torchbench/dcgan/eval/eager/bs2/cpu:AMD EPYC"]
        self.assertEqual(dcgan.get("data-verdict"), "SAME")
        self.assertIsNone(dcgan.get("class"))
        # the run-context differences: the commands differ (night_9's -k names the planted models)
        diff = {text_of(tr.find("th")): tr for tr in root.find(".//table[@id='context-diff']/tbody")}
        self.assertIn("command", diff)
        self.assertIn("night_9", text_of(diff["command"]))

    def test_broken_accuracy_drift_missing_and_context_rows(self):
        tonight = self.night("tonight")
        shutil.copytree(self.night("night_8"), tonight)
        records = read_records(os.path.join(tonight, "results.jsonl"))
        broken, drifted, missing = (config_of(records[i]) for i in range(3))
        records[0]["verification_code"] = "FAIL"
        records[1]["verification"]["rmse_vs_fp64"] *= 100
        records[1]["verification"]["max_rel_error"] = 0.5
        del records[2]
        with open(os.path.join(tonight, "results.jsonl"), "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in records)
        with open(os.path.join(tonight, "run_context.json"), encoding="utf-8") as f:
            context = json.load(f)
        context["run_environment"]["threads"]["OMP_NUM_THREADS"] = "1"
        context["run_environment"]["cpu_affinity"] = "0"
        with open(os.path.join(tonight, "run_context.json"), "w", encoding="utf-8") as f:
            json.dump(context, f)
        out = os.path.join(self.out, "compare.html")
        self.report(f"--output-dirname={tonight}", f"--compare-to={self.night('night_8')}", f"--output={out}")
        root = self.page(out)
        rows = self.comparison_rows(root)
        gate = self.gate_verdicts("--baseline", self.night("night_8"), tonight)
        self.assertEqual({c: tr.get("data-verdict") for c, tr in rows.items()}, gate)
        self.assertEqual(gate[broken], "BROKEN")
        self.assertEqual(gate[drifted], "ACCURACY_DRIFT")
        self.assertEqual(gate[missing], "MISSING")
        for config in (broken, drifted):
            self.assertEqual(rows[config].get("class"), "regression")
        self.assertEqual(text_of(rows[broken].findall("td")[8]).split(), ["PASS", "→", "FAIL"])
        accuracy = rows[drifted].findall("td")[9]
        self.assertIn("fail", accuracy.get("class").split())
        old = read_records(os.path.join(self.night("night_8"), "results.jsonl"))[1]["verification"]
        self.assertIn(f"max_rel_error: {old['max_rel_error']!r} → 0.5", text_of(accuracy))
        self.assertIn(f"rmse_vs_fp64: {old['rmse_vs_fp64']!r} → {records[1]['verification']['rmse_vs_fp64']!r}",
                      text_of(accuracy))
        self.assertIn("not in this night", text_of(rows[missing]))
        diff = {text_of(tr.find("th")): [text_of(td) for td in tr.findall("td")]
                for tr in root.find(".//table[@id='context-diff']/tbody")}
        self.assertEqual(diff["run_environment.threads.OMP_NUM_THREADS"], ["null", "1"])
        self.assertEqual(diff["run_environment.cpu_affinity"], ["0-1", "0"])

    def test_paired_records_compare_their_paired_speedups(self):
        def pair(night, speedups):
            path = os.path.join(self.night(night), "results.jsonl")
            records = read_records(path)
            for r in records:
                if r["experiment"]["dynamo"] == "torchscript" and r["model"]["model_name"] == "alexnet":
                    s = sorted(speedups)
                    r["paired"] = {"baseline": "eager", "order": "ABBA", "speedups": speedups,
                                   "speedup": {"median": statistics.median(s), "low": s[0], "high": s[-1],
                                               "confidence": 0.95, "count": len(s)}}
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(json.dumps(r) + "\n" for r in records)
        pair("night_7", [2.0, 2.1, 1.9, 2.05, 1.95, 2.0, 2.02])
        pair("night_8", [1.0, 1.05, 0.95, 1.02, 0.98, 1.0, 1.01])
        out = os.path.join(self.out, "compare.html")
        self.report(f"--output-dirname={self.night('night_8')}", f"--compare-to={self.night('night_7')}",
                    f"--output={out}")
        rows = self.comparison_rows(self.page(out))
        row = rows["torchbench/alexnet/eval/torchscript/bs2/cpu:AMD EPYC"]
        cell = row.findall("td")[5]
        self.assertIn("paired", text_of(cell).split())
        ratio, low, high = map(float, interval_of(text_of(cell)))
        self.assertAlmostEqual(ratio, 2.0 / 1.0, places=3)  # the baseline's speedup / tonight's
        self.assertGreater(low, 1)
        gate = self.gate_verdicts("--baseline", self.night("night_7"), self.night("night_8"))
        self.assertEqual(row.get("data-verdict"), gate[row.get("data-config")])
        self.assertEqual(row.get("data-verdict"), "SLOWER")
        # the other configs stay unpaired
        self.assertIn("unpaired", text_of(rows["torchbench/alexnet/eval/eager/bs2/cpu:AMD EPYC"].findall("td")[5]))

    def test_compare_to_latest_reads_the_history(self):
        self.import_nights(*[f"night_{k}" for k in range(1, 9)])
        out = os.path.join(self.out, "compare.html")
        self.report(f"--output-dirname={self.night('night_9')}", "--compare-to=latest", f"--history={self.db}",
                    f"--output={out}")
        root = self.page(out)
        self.assertIn(self.night("night_8"), text_of(root.find(".//section[@id='comparison']/table")))
        rows = self.comparison_rows(root)
        self.assertEqual({c: tr.get("data-verdict") for c, tr in rows.items()},
                         self.gate_verdicts("--db", self.db, "--against-latest", self.night("night_9")))
        self.assertIsNotNone(root.find(".//section[@id='trends']"))
        nav = [a.get("href") for a in root.find(".//nav")]
        self.assertEqual(nav[:3], ["#context", "#comparison", "#trends"])
        # bad input names what was wrong
        proc = self.report(f"--output-dirname={self.night('night_9')}", "--compare-to=latest", expect=2)
        self.assertIn("--compare-to=latest needs --history", proc.stderr)
        proc = self.report(f"--output-dirname={self.night('night_9')}",
                           f"--compare-to={self.night('nowhere')}", expect=2)
        self.assertIn("is not a directory", proc.stderr)
        proc = self.report(f"--history={os.path.join(self.out, 'none.sqlite')}", expect=2)
        self.assertIn("no history database", proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "none.sqlite")))

    def trend_points(self, root):
        """{model: {series name: [(x, flagged)]}} of the trend charts."""
        svg = "{http://www.w3.org/2000/svg}"
        out = {}
        for figure in root.findall(".//section[@id='trends']//figure"):
            series = {}
            for g in figure.iter(f"{svg}g"):
                if g.get("class") == "series":
                    points = [p for p in g.findall(f"{svg}g") if p.get("class", "").startswith("point")]
                    series[g.get("data-name")] = [("flagged" in p.get("class"), text_of(p.find(f"{svg}title")))
                                                  for p in points]
            out[figure.get("data-model")] = series
        return out

    def test_trends_have_a_point_per_night_and_mark_the_gates_flags(self):
        names = [f"night_{k}" for k in range(1, 11)]
        self.import_nights(*names)
        self.report(f"--history={self.db}")
        root = self.page(os.path.join(self.out, "trends.html"))  # next to the database
        self.assertIsNone(root.find(".//table[@id='comparison-table']"))
        nights = root.findall(".//table[@id='trend-nights']/tbody/tr")
        self.assertEqual([text_of(tr.findall("td")[4]) for tr in nights], [self.night(n) for n in names])
        charts = self.trend_points(root)
        self.assertEqual(set(charts), {"resnet18", "dcgan", "squeezenet1_1", "alexnet"})
        for model, series in charts.items():
            self.assertEqual(set(series), {"eval/eager/bs2", "eval/torchscript/bs2"}, model)
            for name, points in series.items():
                self.assertEqual(len(points), 10, f"{model} {name}")  # a point per night
                for k, (_, title) in enumerate(points, 1):
                    self.assertTrue(title.startswith(f"night {k} "), title)
        # the flags are the gate's first-pass verdicts of each night against the nights before it
        flags = {(int(tr.get("data-night")), tr.get("data-config"))
                 for tr in root.findall(".//table[@id='trend-flags']/tbody/tr")}
        for k in (9, 10):
            gate = self.gate_verdicts("--db", self.db, self.night(f"night_{k}"))
            failing = {c for c, v in gate.items() if v in ("SLOWER", "BROKEN", "ACCURACY_DRIFT")}
            self.assertEqual({c for n, c in flags if n == k}, failing, f"night_{k}")
            self.assertTrue({c for c in gate if model_of(c) in PLANTED_MODELS} <= failing)
        for model in PLANTED_MODELS:
            for name, points in charts[model].items():
                self.assertEqual([flagged for flagged, _ in points[8:]], [True, True], f"{model} {name}")
        # the markers agree with the table
        marked = {(k, f"torchbench/{m}/{s.replace('/bs2', '')}/bs2/cpu:AMD EPYC")
                  for m, series in charts.items() for s, points in series.items()
                  for k, (flagged, _) in enumerate(points, 1) if flagged}
        self.assertEqual(marked, flags)
        # the no-change nights that the gate does not flag show no mark
        for k in range(1, 8):
            self.assertEqual(text_of(nights[k - 1].findall("td")[5]), str(len({c for n, c in flags if n == k})))

    def test_last_limits_the_nights_but_not_their_history(self):
        self.import_nights(*[f"night_{k}" for k in range(1, 11)])
        out = os.path.join(self.out, "report.html")
        self.report(f"--output-dirname={self.night('night_10')}", f"--history={self.db}", "--last=3",
                    f"--output={out}")
        root = self.page(out)
        nights = root.findall(".//table[@id='trend-nights']/tbody/tr")
        self.assertEqual([text_of(tr.findall("td")[4]) for tr in nights],
                         [self.night(f"night_{k}") for k in (8, 9, 10)])
        for series in self.trend_points(root).values():
            for points in series.values():
                self.assertEqual(len(points), 3)
        # the first night shown is still judged against the 7 nights before it, outside the window
        full = os.path.join(self.out, "full.html")
        self.report(f"--history={self.db}", "--last=0", f"--output={full}")
        def flags(path):
            return {(int(tr.get("data-night")), tr.get("data-config"))
                    for tr in self.page(path).findall(".//table[@id='trend-flags']/tbody/tr")}
        self.assertTrue(flags(out))
        self.assertEqual(flags(out), {(n - 7, c) for n, c in flags(full) if n >= 8})
        # the page for night_10 keeps its own sections
        self.assertIsNotNone(root.find(".//section[@id='summary']"))
