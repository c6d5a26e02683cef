"""Every command of README.md's fenced shell blocks runs as written (issue 51).

Each command that starts with `build/<tool>` runs with that tool's binary, taken from the environment
variable tests/CMakeLists.txt's e2e_environment sets (EXPERIMENT_RUNNER=..., HTML_REPORT=..., ...),
in a scratch working directory whose `output/` holds a recorded night (tests/e2e/fixtures/nights),
so that report commands have results to read. experiment_runner commands get `--dry-run` appended
(it lists the configs and runs nothing: no GPU, network or time needed). Every command must exit 0.
A command that cannot run here must be listed in SKIPPED with the reason; a command that is neither a
tool invocation nor listed fails the test, so a new README command is never silently left out.
"""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import tempfile
import unittest

REPO = pathlib.Path(__file__).resolve().parents[2]
README = REPO / "README.md"
FIXTURE_NIGHT = REPO / "tests" / "e2e" / "fixtures" / "nights" / "night_1"

# build/<tool> -> the environment variable holding its path.
TOOL_VARIABLES = {
    "experiment_runner": "EXPERIMENT_RUNNER",
    "result_analyzer": "RESULT_ANALYZER",
    "aggregate": "AGGREGATE",
    "compare_runs": "COMPARE_RUNS",
    "regression_gate": "REGRESSION_GATE",
    "html_report": "HTML_REPORT",
    "reference_outputs": "REFERENCE_OUTPUTS",
    "numeric_check": "NUMERIC_CHECK",
    "backend_bench": "BACKEND_BENCH",
    "run_and_check": "RUN_AND_CHECK",
}
# Tools that take --dry-run (checked against --help in test_dry_run_tools_have_it).
DRY_RUN_TOOLS = {"experiment_runner"}

# Commands not run, each with its reason. Keys are the command as README.md writes it (continuation
# lines joined, comment removed).
SKIPPED = {
    "make run": "builds and runs a whole sweep; CI builds with it and the e2e tests cover the sweep",
    "make test": "the test command itself (CI runs it)",
    "build/experiment_runner --suite-name=exported --model-path=my_model.pt2 --accelerator=cpu "
    "--dynamo=None --dynamo=inductor": "needs the user's own .pt2 file (tests/e2e/test_imported.py "
    "runs a generated one)",
}


def readme_commands():
    """The commands of README.md's ```sh blocks: continuation lines joined, comments removed."""
    commands = []
    in_block = False
    pending = ""
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            in_block = (not in_block) and line.strip() in ("```sh", "```bash", "```shell")
            pending = ""
            continue
        if not in_block:
            continue
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1].rstrip() + " "
            continue
        command = pending + stripped
        pending = ""
        # A trailing comment: ' # ...' outside quotes (shlex knows where quotes are).
        lexer = shlex.shlex(command, posix=True, punctuation_chars=False)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
        commands.append((command, words))
    return commands


def without_comment(command):
    """The command text before an unquoted ' #' comment."""
    match = re.search(r"\s+#\s", command)
    if match and command[:match.start()].count("'") % 2 == 0 and command[:match.start()].count('"') % 2 == 0:
        return command[:match.start()].rstrip()
    return command.rstrip()


class ReadmeCommandsTest(unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.mkdtemp(prefix="readme-commands-")
        shutil.copytree(FIXTURE_NIGHT, os.path.join(self.scratch, "output"))
        self.env = dict(os.environ)
        # README's commands are a user's: the checkout's configs/, the built-in TorchBench models.
        self.env["BENCHMATRIX_CONFIG_DIR"] = str(REPO / "configs")
        self.env.setdefault("BENCHMATRIX_TORCHBENCH_DIR", "none")

    def tearDown(self):
        shutil.rmtree(self.scratch, ignore_errors=True)

    def binary(self, tool):
        variable = TOOL_VARIABLES.get(tool)
        self.assertIsNotNone(variable, f"README.md runs build/{tool}, a tool this test does not know")
        path = os.environ.get(variable) or str(REPO / "build" / tool)
        self.assertTrue(os.access(path, os.X_OK), f"{variable}={path} is not an executable")
        return path

    def test_readme_has_commands(self):
        commands = [without_comment(c) for c, _ in readme_commands()]
        self.assertIn("make test", commands, "README.md must name `make test`, the test command CI runs")
        self.assertTrue(any(c.startswith("build/experiment_runner") for c in commands))

    def test_skip_list_is_current(self):
        commands = {without_comment(c) for c, _ in readme_commands()}
        for skipped in SKIPPED:
            self.assertIn(skipped, commands, "a SKIPPED command no longer in README.md: remove it")

    def test_dry_run_tools_have_it(self):
        for tool in DRY_RUN_TOOLS:
            help_text = subprocess.run([self.binary(tool), "--help"], capture_output=True,
                                       text=True, timeout=30).stdout
            self.assertIn("--dry-run", help_text)

    def test_every_command_runs(self):
        ran = 0
        for command, words in readme_commands():
            text = without_comment(command)
            if text in SKIPPED:
                continue
            with self.subTest(command=text):
                self.assertTrue(words and words[0].startswith("build/"),
                                f"not a build/<tool> command and not in SKIPPED: {text}")
                tool = words[0][len("build/"):]
                argv = [self.binary(tool)] + words[1:]
                if tool in DRY_RUN_TOOLS:
                    argv.append("--dry-run")
                result = subprocess.run(argv, cwd=self.scratch, env=self.env, capture_output=True,
                                        text=True, timeout=120)
                self.assertEqual(result.returncode, 0,
                                 f"{text}\nexit {result.returncode}\n{result.stdout[-2000:]}\n"
                                 f"{result.stderr[-2000:]}")
                ran += 1
        self.assertGreater(ran, 0)


if __name__ == "__main__":
    unittest.main()
