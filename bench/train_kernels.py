"""Where a train step's device time goes, side by side (issue 50): Chrome traces of N steps each
(ours from experiment_runner --dump-pytorch-profiles, <out>/<model>/<repeat>/trace-*.json; Python's
from bench/train_step_python.py's profile command), their device events grouped into kernel
families and summed per step.

    python3 bench/train_kernels.py LABEL=TRACE:STEPS [LABEL=TRACE:STEPS ...] [--top 25]

prints, in markdown:
  - one row per family (convolution forward, data-gradient and weight-gradient, the layout
    copies around them, GEMMs, Triton pointwise and reduction kernels, ATen's elementwise,
    reduction, BatchNorm and pooling kernels, the optimizer's multi-tensor kernels, memcpy and
    memset), each trace's kernels per step and ms per step;
  - the convolution kernels' memory layout as their names give it (cuDNN and CUTLASS name the
    tensor layout: nhwc is channels-last, nchw is contiguous);
  - each trace's top kernels by time per step.
`--events` picks the trace categories counted (default: kernel,gpu_memcpy,gpu_memset, the
device's; cpu_op to read CPU traces, for a check of the script on a machine without a GPU).
"""
import argparse
import collections
import json
import re
import sys

DEVICE_EVENTS = "kernel,gpu_memcpy,gpu_memset"

# (family, pattern on the lower-cased name), the first match wins.
FAMILIES = (
    ("memcpy", re.compile(r"^memcpy|^\[memcpy")),
    ("memset", re.compile(r"^memset|^\[memset")),
    ("conv data-gradient", re.compile(r"dgrad|convolution_backward_data|conv.*backward_input")),
    ("conv weight-gradient", re.compile(r"wgrad|convolution_backward_weight|conv.*backward_weight")),
    ("conv layout copy", re.compile(r"nchwtonhwc|nhwctonchw|nchw2nhwc|nhwc2nchw")),
    ("conv forward", re.compile(r"fprop|conv|cudnn|implicit_gemm|implicit_convolve")),
    ("optimizer (multi-tensor)", re.compile(r"multi_tensor_apply|fused_adam|adam|sgd")),
    ("GEMM", re.compile(r"gemm|cutlass|cublas|matmul|sm\d+_xmma|ampere_|hopper_|nvjet")),
    ("Triton reduction", re.compile(r"^triton_(red|per)_")),
    ("Triton pointwise", re.compile(r"^triton_poi_")),
    ("Triton other", re.compile(r"^triton")),
    ("BatchNorm (ATen)", re.compile(r"batch_norm|batchnorm|bn_fw|bn_bw|welford")),
    ("pooling (ATen)", re.compile(r"pool")),
    ("reduction (ATen)", re.compile(r"reduce_kernel|reduction")),
    ("copy/transpose (ATen)", re.compile(r"copy|transpose|permute|cat_")),
    ("elementwise (ATen)", re.compile(r"elementwise|vectorized|unrolled")),
)


def family_of(name):
    lower = name.lower()
    for family, pattern in FAMILIES:
        if pattern.search(lower):
            return family
    return "other"


def conv_layout(name):
    lower = name.lower()
    if "nhwc" in lower:
        return "nhwc (channels-last)"
    if "nchw" in lower:
        return "nchw (contiguous)"
    return "not named"


def parse_source(text):
    """LABEL=TRACE:STEPS -> (label, path, steps)."""
    match = re.fullmatch(r"([^=]+)=(.+):(\d+)", text)
    if not match or int(match.group(3)) < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected LABEL=TRACE:STEPS (STEPS the steps the trace holds, at least 1)")
    return match.group(1), match.group(2), int(match.group(3))


def device_events(path, categories):
    """The trace's events of `categories`: [(name, duration in microseconds)]."""
    try:
        with open(path, encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, ValueError) as error:
        raise SystemExit(f"train_kernels.py: cannot read the trace {path}: {error}")
    events = trace.get("traceEvents") if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        raise SystemExit(f"train_kernels.py: {path} is not a Chrome trace (no traceEvents list)")
    return [(e.get("name", "?"), float(e.get("dur", 0))) for e in events
            if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") in categories]


def summarise(events, steps):
    """({family: (count per step, ms per step)}, {layout: count per step}, [(name, count per
    step, ms per step)] by time descending)."""
    families = collections.defaultdict(lambda: [0, 0.0])
    layouts = collections.Counter()
    kernels = collections.defaultdict(lambda: [0, 0.0])
    for name, duration_us in events:
        family = family_of(name)
        families[family][0] += 1
        families[family][1] += duration_us
        if family.startswith("conv"):
            layouts[conv_layout(name)] += 1
        kernels[name][0] += 1
        kernels[name][1] += duration_us
    per_step = {f: (c / steps, us / 1e3 / steps) for f, (c, us) in families.items()}
    top = sorted(((n, c / steps, us / 1e3 / steps) for n, (c, us) in kernels.items()),
                 key=lambda row: -row[2])
    return per_step, {k: v / steps for k, v in layouts.items()}, top


def short(name, width=90):
    return name if len(name) <= width else name[: width - 3] + "..."


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sources", nargs="+", type=parse_source, metavar="LABEL=TRACE:STEPS")
    parser.add_argument("--top", type=int, default=25, help="kernels listed per trace (25)")
    parser.add_argument("--events", default=DEVICE_EVENTS,
                        help=f"trace categories counted, comma-separated ({DEVICE_EVENTS})")
    args = parser.parse_args(argv)
    categories = set(args.events.split(","))
    summaries = []
    for label, path, steps in args.sources:
        events = device_events(path, categories)
        if not events:
            raise SystemExit(f"train_kernels.py: {path} holds no events of {args.events} (a CPU "
                             "run's trace has no kernels: --events=cpu_op reads its ops)")
        summaries.append((label, steps, *summarise(events, steps)))

    labels = [s[0] for s in summaries]
    print("| family | " + " | ".join(f"{l}: per step | {l}: ms/step" for l in labels) + " |")
    print("|---|" + "---|---|" * len(labels))
    order = [f for f, _ in FAMILIES] + ["other"]
    totals = [[0.0, 0.0] for _ in summaries]
    for family in order:
        if not any(family in s[2] for s in summaries):
            continue
        cells = []
        for i, (_, _, families, _, _) in enumerate(summaries):
            count, ms = families.get(family, (0, 0.0))
            totals[i][0] += count
            totals[i][1] += ms
            cells.append(f"{count:.1f} | {ms:.3f}")
        print(f"| {family} | " + " | ".join(cells) + " |")
    print("| **all** | " + " | ".join(f"**{c:.1f}** | **{ms:.3f}**" for c, ms in totals) + " |")

    print("\nConvolution kernels per step by the layout their names give:\n")
    print("| layout | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for layout in ("nhwc (channels-last)", "nchw (contiguous)", "not named"):
        print(f"| {layout} | " + " | ".join(f"{s[3].get(layout, 0):.1f}" for s in summaries) + " |")

    for label, steps, _, _, top in summaries:
        print(f"\nTop kernels of {label} ({steps} steps), per step:\n")
        print("| ms/step | calls/step | family | kernel |")
        print("|---|---|---|---|")
        for name, count, ms in top[: args.top]:
            print(f"| {ms:.3f} | {count:.1f} | {family_of(name)} | `{short(name)}` |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
