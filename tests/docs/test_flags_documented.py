"""Every flag the programs print in --help is documented somewhere under docs/, and no file under
docs/ nor README.md names a flag that no program has. The guide also quotes other programs' command
lines (pip, scripts, helpers, PyTorch's harness): NOT_OURS lists those flags, each with its program;
a token that is a proper prefix of a real flag, in a paragraph or list item that says "prefix", is
an example of argparse's prefix rule and passes too.

Binary paths come from the environment (tests/CMakeLists.txt sets them): EXPERIMENT_RUNNER,
RESULT_ANALYZER, AGGREGATE, COMPARE_RUNS, HTML_REPORT, REGRESSION_GATE, REFERENCE_OUTPUTS,
NUMERIC_CHECK, RUN_AND_CHECK, BACKEND_BENCH. regression_gate and reference_outputs are asked for
each subcommand's --help too.
"""
import os
import pathlib
import re
import subprocess
import unittest

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
README = REPO / "README.md"

TOOLS = {
    "experiment_runner": "EXPERIMENT_RUNNER",
    "result_analyzer": "RESULT_ANALYZER",
    "aggregate": "AGGREGATE",
    "compare_runs": "COMPARE_RUNS",
    "html_report": "HTML_REPORT",
    "regression_gate": "REGRESSION_GATE",
    "reference_outputs": "REFERENCE_OUTPUTS",
    "numeric_check": "NUMERIC_CHECK",
    "run_and_check": "RUN_AND_CHECK",
    "backend_bench": "BACKEND_BENCH",
}

# `--flag`-looking tokens the docs may write although no benchmatrix program has them.
NOT_OURS = {
    # other programs' flags
    "--cold-start-latency",  # PyTorch's dynamo harness, the model of --cold-start
    "--accuracy",  # PyTorch's dynamo harness: its accuracy runs
    "--performance",  # PyTorch's dynamo harness: its timing runs
    "--amp",  # PyTorch's dynamo harness: AMP
    "--float16",  # PyTorch's dynamo harness
    "--xla_dump_to",  # XLA's flag inside XLA_FLAGS (--dump-hlo adds it)
    "--xla_gpu_cuda_data_dir",  # XLA's flag inside XLA_FLAGS (the openxla child adds it)
    "--partition",  # sbatch's, which --slurm-partition sets
    "--gpus-per-task",  # sbatch's, which --slurm-gpus-per-task sets
    "--time",  # sbatch's, which --slurm-time sets
    "--account",  # sbatch's, the example of --slurm-sbatch-arg
    "--export",  # sbatch's --export=ALL (a real experiment_runner flag as well)
    "--precision",  # TorchBench's Model(extra_args=["--precision", "fp32"])
    "--build",  # cmake --build
    "--always",  # git describe --always --dirty
    "--dirty",  # git describe --always --dirty
    "--flag",  # the placeholder of the parsing rules (`--flag=value` or `--flag value`)
    "--no-deps",  # pip download / pip install (docs/guide/building.md's offline wheels)
    "--only-binary",  # pip download --only-binary=:all:
    "--platform",  # pip download --platform manylinux2014_x86_64
    "--python-version",  # pip download --python-version 3.12
    "--implementation",  # pip download --implementation cp
    "--no-index",  # pip install --no-index
    "--target",  # pip install --target /tmp/site
    "--boost-version",  # scripts/prepare_offline_build.sh --boost-version=M.m
    "--eval-only",  # bench/import_scan_cpu.py OUT [--eval-only]
    "--carry",  # bench/build_gpu.sh --carry OUT (the runner built here for the GPU machine)
    "--train",  # python -m benchmatrix_compile --train (the train-step package)
    # Prefix examples (`--ac`, `--bat`, `--excl`, ...) are recognised by rule: dead_flags().
}

# A flag token: two dashes, a letter, then letters, digits, '-' or '_', not inside a longer word
# (`a--b`) and not a Markdown rule (`---`).
FLAG = re.compile(r"(?<![\w-])--[A-Za-z][A-Za-z0-9_-]*")
# An option line of argparse-style help: "  --flag VALUE" or "  -k, --filter FILTER".
OPTION_LINE = re.compile(r"^  (?:-\w, )?(--[A-Za-z][A-Za-z0-9_-]*)")
SUBCOMMANDS = re.compile(r"^usage: \S+ \{([a-z,]+)\}")
# Where a paragraph, a list item or a table row starts: after a blank line, or at a line opening a
# list item or a table row.
BLOCK_BREAK = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+\.)\s|\|)")


def help_text(argv):
    done = subprocess.run(argv + ["--help"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} --help exited {done.returncode}: {done.stderr}")
    return done.stdout


def defined_flags(text):
    """The flags an argparse-style help defines in its options list."""
    flags = set()
    for line in text.splitlines():
        match = OPTION_LINE.match(line)
        if match:
            flags.add(match.group(1))
    return flags


def all_tool_flags():
    """{"tool" or "tool subcommand": set of flags}."""
    result = {}
    for tool, variable in TOOLS.items():
        path = os.environ.get(variable)
        if not path:
            raise unittest.SkipTest(f"{variable} is not set (the path of {tool})")
        text = help_text([path])
        result[tool] = defined_flags(text)
        match = SUBCOMMANDS.match(text)
        if match:
            for sub in match.group(1).split(","):
                result[f"{tool} {sub}"] = defined_flags(help_text([path, sub]))
    return result


def doc_tokens(root):
    """{flag token: [files]} of every Markdown file under root."""
    tokens = {}
    for path in sorted(root.rglob("*.md")):
        for token in FLAG.findall(path.read_text(encoding="utf-8")):
            tokens.setdefault(token, []).append(str(path.relative_to(DOCS)))
    return tokens


def checked_files():
    """Every Markdown file under docs/, and README.md."""
    return sorted(DOCS.rglob("*.md")) + [README]


def dead_flags(text, known):
    """The flag tokens of text that no program has: not in known, not in NOT_OURS, and not an
    example of argparse's prefix rule (a proper prefix of a known flag, such as `--bat` for
    --batch-size, in a paragraph or list item that says "prefix")."""
    dead = set()
    for block in BLOCK_BREAK.split(text):
        about_prefixes = "prefix" in block.lower()
        for token in FLAG.findall(block):
            if token in known or token in NOT_OURS:
                continue
            if about_prefixes and any(flag.startswith(token) for flag in known):
                continue  # token is not in known, so the prefix is a proper one
            dead.add(token)
    return dead


class FlagsDocumented(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.flags = all_tool_flags()
        cls.known = set().union(*cls.flags.values()) | {"--help"}

    def test_help_lists_flags(self):
        for tool in TOOLS:
            if tool in ("regression_gate", "reference_outputs"):
                continue  # flags only in their subcommands
            self.assertTrue(self.flags[tool], f"{tool} --help lists no flag")

    def test_every_flag_is_documented(self):
        documented = set(doc_tokens(DOCS))
        missing = sorted(f"{tool}: {flag}" for tool, flags in self.flags.items()
                         for flag in flags if flag not in documented)
        self.assertEqual(missing, [], "flags printed by --help that no file under docs/ names")

    def test_docs_name_no_dead_flag(self):
        dead = {}
        for path in checked_files():
            for token in dead_flags(path.read_text(encoding="utf-8"), self.known):
                dead.setdefault(token, set()).add(str(path.relative_to(REPO)))
        listed = sorted(f"{token} ({', '.join(sorted(files))})" for token, files in dead.items())
        self.assertEqual(listed, [], "flags written in docs/ or README.md that no program has "
                         "(another program's flag: add it to NOT_OURS with that program)")

    def test_prefix_rule(self):
        known = {"--batch-size", "--baseline", "--exclude"}
        text = ("Intro naming `--bat`.\n\n- Prefixes: `--bat`, `--exclud` and `--exclusive` work.\n"
                "- Not about them: `--ba` here\n  is a dead flag, `--baseline` a real one.\n")
        self.assertEqual(dead_flags(text, known), {"--bat", "--ba", "--exclusive"})


if __name__ == "__main__":
    unittest.main()
