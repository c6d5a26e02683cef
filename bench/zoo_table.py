"""One line per record of an experiment_runner results file, for the zoo benches
(bench/zoo_sweep_gpu.sh): model, test, backend, verification code, per-iteration median (counted
repeats), peak device memory, the compile figures (compile.ahead's cold compile when compiled
ahead, the timed child's own preparation) and, for records that did not run or did not pass, the
reason. Then per backend: how many configs ran, passed and failed.
Usage: python3 bench/zoo_table.py RESULTS.jsonl
"""
import collections
import json
import statistics
import sys

MIB = 1024 * 1024


def counted_median(values):
    """The median of the repeats that count (repeat 0 is warm-up unless it is the only one)."""
    if not values:
        return None
    return statistics.median(values[1:] if len(values) > 1 else values)


def first_line(text, limit=150):
    return str(text).strip().splitlines()[0][:limit] if text else ""


def main(path):
    totals = collections.defaultdict(collections.Counter)
    print(f"{'model':24} {'test':5} {'backend':14} {'verification':26} {'ms/iter':>8} "
          f"{'peak MiB':>8} {'ahead s':>7} {'prep s':>6}  note")
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        m, e = r["metrics"], r["experiment"]
        backend = e["dynamo"] or ("xla" if e["xla"] else "eager")
        code = r.get("verification_code") or "-"
        per_iter = counted_median(m.get("per_iter_time"))
        peak = counted_median(m.get("peak_device_allocated_bytes"))
        compile_ = r.get("compile", {})
        ahead = compile_.get("ahead", {}).get("compile_time_s")
        prep = (m.get("compile_time_s") or [None])[0]
        note = ""
        if "error" in m:
            note = first_line(m["error"])
        elif code not in ("PASS", "VERIFIER_SKIPPED", "-"):
            verification = r.get("verification") or {}
            note = first_line(verification.get("message") or verification.get("worst") or "")
        if compile_.get("capture_fallback"):
            note += " capture_fallback: " + first_line(compile_["capture_fallback"], 80)
        kind = ("skip" if str(m.get("error", "")).startswith("SKIP") else
                "error" if "error" in m else "ran")
        totals[backend][kind] += 1
        totals[backend][code] += 1
        print(f"{r['model']['model_name']:24} {e['test']:5} {backend:14} {code:26} "
              f"{'%.3f' % (per_iter * 1e3) if per_iter else '-':>8} "
              f"{'%.0f' % (peak / MIB) if peak else '-':>8} "
              f"{'%.1f' % ahead if ahead is not None else '-':>7} "
              f"{'%.1f' % prep if prep is not None else '-':>6}  {note}")
    print()
    for backend, counts in totals.items():
        print(f"{backend:14} ran {counts['ran']}, skip {counts['skip']}, error {counts['error']}; "
              f"PASS {counts['PASS']}, FAIL {counts['FAIL']}, other codes "
              f"{sum(v for k, v in counts.items() if k not in ('ran', 'skip', 'error', 'PASS', 'FAIL', 'VERIFIER_SKIPPED', 'VERIFIER_DIDNT_RUN', '-'))}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
