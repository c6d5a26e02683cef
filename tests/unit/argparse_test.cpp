// The command line behaves as Python argparse does for the original runner's flags.
#include "core/argparse.hpp"
#include "core/directory_tree.hpp"
#include "runner/runner_cli.hpp"
#include "runner/runner_options.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace benchmatrix;

namespace {
const std::vector<std::string> suites = {"dummy", "torchbench"};
runner_options parse(std::vector<std::string> args, const std::string& config_dir = "/nonexistent") {
  return parse_runner_options(args, suites, config_dir);
}
}  // namespace

TEST_CASE("--flag=value and --flag value; unambiguous prefixes; last store wins") {
  const auto o = parse({"--suite-name=dummy", "--iterations", "3", "--output-dir=/tmp/x",
                        "--repeat", "4", "--repeat=7", "--timestamp=12.5", "--timestamp", "99.25"});
  CHECK(o.suite_names == std::vector<std::string>{"dummy"});
  CHECK(o.iterations_per_run == 3);
  CHECK(o.output_dirname == "/tmp/x");
  CHECK(o.repeat == 7);
  CHECK(o.timestamp == 99.25);
  CHECK(o.subprocess_timeout == 1800);
  CHECK(o.output_basename == "results.jsonl");
  CHECK(o.log_level == "info");
}

TEST_CASE("append flags accumulate in order; None means null; -k/-x short forms") {
  const auto o = parse({"--suite-name", "torchbench", "--xla", "PJRT", "--xla=None", "--dynamo",
                        "none", "--dynamo", "inductor", "-kllama", "-k", "resnet", "-x", "^alex",
                        "--xla-flags", "None", "--xla-flags=--xla_foo=1"});
  REQUIRE(o.xla.size() == 2);
  CHECK(o.xla[0] == "PJRT");
  CHECK_FALSE(o.xla[1].has_value());
  REQUIRE(o.dynamo.size() == 2);
  CHECK_FALSE(o.dynamo[0].has_value());
  CHECK(o.dynamo[1] == "inductor");
  CHECK(o.filter == std::vector<std::string>{"llama", "resnet"});
  CHECK(o.exclude == std::vector<std::string>{"^alex"});
  REQUIRE(o.xla_flags.size() == 2);
  CHECK_FALSE(o.xla_flags[0].has_value());
  CHECK(o.xla_flags[1] == "--xla_foo=1");
}

TEST_CASE("defaults of filter/exclude, and tiers expand into them") {
  auto o = parse({"--suite-name=torchbench"});
  CHECK(o.filter == std::vector<std::string>{"."});
  CHECK(o.exclude == std::vector<std::string>{"^$"});
  o = parse({"--suite-name=torchbench", "--filter-by-tier=3", "--exclude-by-tier", "7"});
  CHECK(o.filter ==
        std::vector<std::string>{"^(doctr_det_predictor|doctr_reco_predictor|drq|functorch_maml_omniglot)$"});
  CHECK(o.exclude == std::vector<std::string>{"^$"});  // unknown tiers are ignored, as in tiers.py
}

TEST_CASE("usage errors name the flag and what was expected") {
  CHECK_THROWS_WITH_AS(parse({"--suite-name=dummy", "--accelerator=gpu"}),
                       "argument --accelerator: invalid choice: 'gpu' (choose from 'cpu', 'cuda', 'tpu')",
                       usage_error);
  CHECK_THROWS_WITH_AS(parse({"--suite-name=dummy", "--repeat=ten"}),
                       "argument --repeat: invalid int value: 'ten'", usage_error);
  CHECK_THROWS_WITH_AS(parse({"--suite-name=resnet"}),
                       "argument --suite-name: invalid choice: 'resnet' (choose from 'dummy', 'torchbench')",
                       usage_error);
  CHECK_THROWS_WITH_AS(parse({"--repeat=3"}), "the following arguments are required: --suite-name",
                       usage_error);
  CHECK_THROWS_WITH_AS(parse({"--suite-name=dummy", "--timeout=3"}),
                       doctest::Contains("unrecognized arguments"), usage_error);
  CHECK_THROWS_WITH_AS(parse({"--suite-name=dummy", "--no"}),
                       doctest::Contains("ambiguous option"), usage_error);  // --no-skip or --no-resume
  CHECK_THROWS_WITH_AS(parse({"--suite-name=dummy", "--total-partitions=10"}),
                       doctest::Contains("argument --total-partitions: invalid choice: '10'"),
                       usage_error);
  CHECK_THROWS_WITH_AS(parse({"--suite-name=dummy", "--total-partitions=2", "--partition-id=2"}),
                       doctest::Contains("argument --partition-id"), usage_error);
  CHECK_THROWS_WITH_AS(parse({"--suite-name=dummy", "stray"}),
                       "unrecognized arguments: stray", usage_error);
  CHECK_THROWS_WITH_AS(parse({"--suite-name=dummy", "--experiment-config={}"}),
                       doctest::Contains("must be given together"), usage_error);
  CHECK_THROWS_AS(parse({"--suite-name=dummy", "--repeat"}), usage_error);
  // argparse names the unknown flag with its stray value, in command-line order
  CHECK_THROWS_WITH_AS(parse({"--suite-name", "dummy", "--timeout", "5"}),
                       "unrecognized arguments: --timeout 5", usage_error);
  // a value flag never takes the next flag as its value (argparse: expected one argument)
  CHECK_THROWS_WITH_AS(parse({"--suite-name=dummy", "--output-basename", "--dry-run"}),
                       "argument --output-basename: expected one argument", usage_error);
  CHECK_THROWS_WITH_AS(parse({"--suite-name=dummy", "-k", "--no-skip"}),
                       "argument -k/--filter: expected one argument", usage_error);
  CHECK_THROWS_WITH_AS(parse({"--suite-name=dummy", "--xla-flags", "--xla_dump_to=/tmp"}),
                       "argument --xla-flags: expected one argument", usage_error);
}

TEST_CASE("values that argparse does not mistake for flags") {
  // negative numbers, '-' alone and words with a space are values, attached values are values
  CHECK(parse({"--suite-name=dummy", "--xla-flags", "--xla_a=1 --xla_b=2"}).xla_flags ==
        std::vector<std::optional<std::string>>{"--xla_a=1 --xla_b=2"});
  CHECK(parse({"--suite-name=dummy", "--xla-flags=--xla_dump_to=/tmp"}).xla_flags ==
        std::vector<std::optional<std::string>>{"--xla_dump_to=/tmp"});
  CHECK(parse({"--suite-name=dummy", "-k", "-"}).filter == std::vector<std::string>{"-"});
  CHECK(parse({"--suite-name=dummy", "--timestamp", "-3"}).timestamp == -3.0);
}

TEST_CASE("a matrix preset supplies flags; the command line overrides it") {
  const auto dir = std::filesystem::temp_directory_path() / "benchmatrix-preset-test";
  std::filesystem::create_directories(dir / "matrices");
  std::ofstream(dir / "matrices" / "nightly.yaml")
      << "suite_name: torchbench\nfilter: [llama]\naccelerator: [cpu, cuda]\nrepeat: 3\n"
         "dynamo: [None, inductor]\nno_skip: true\n";
  auto o = parse({"--matrix=nightly", "--repeat=5", "-k", "resnet"}, dir.string());
  CHECK(o.suite_names == std::vector<std::string>{"torchbench"});
  CHECK(o.repeat == 5);
  CHECK(o.filter == std::vector<std::string>{"resnet"});
  CHECK(o.accelerator == std::vector<std::string>{"cpu", "cuda"});
  REQUIRE(o.dynamo.size() == 2);
  CHECK_FALSE(o.dynamo[0].has_value());
  CHECK(o.no_skip);
  CHECK_THROWS_WITH_AS(parse({"--matrix=missing"}, dir.string()),
                       doctest::Contains("presets: nightly"), usage_error);
  std::ofstream(dir / "matrices" / "bad.yaml") << "accelerator: [gpu]\n";
  CHECK_THROWS_WITH_AS(parse({"--matrix=bad", "--suite-name=dummy"}, dir.string()),
                       doctest::Contains("key 'accelerator': argument --accelerator: invalid choice: 'gpu'"),
                       usage_error);
  std::ofstream(dir / "matrices" / "typo.yaml") << "repeats: 3\n";
  CHECK_THROWS_WITH_AS(parse({"--matrix=typo", "--suite-name=dummy"}, dir.string()),
                       doctest::Contains("key 'repeats' is not a flag"), usage_error);
  // Several suites: a YAML list, or the command line's comma-separated text.
  std::ofstream(dir / "matrices" / "both.yaml") << "suite_name: [torchbench, dummy]\n";
  CHECK(parse({"--matrix=both"}, dir.string()).suite_names ==
        std::vector<std::string>{"torchbench", "dummy"});
  std::ofstream(dir / "matrices" / "both.yaml") << "suite_name: dummy,torchbench\n";
  CHECK(parse({"--matrix=both"}, dir.string()).suite_names ==
        std::vector<std::string>{"dummy", "torchbench"});
  std::ofstream(dir / "matrices" / "both.yaml") << "suite_name: [torchbench, resnet]\n";
  CHECK_THROWS_WITH_AS(parse({"--matrix=both"}, dir.string()),
                       doctest::Contains("key 'suite-name': argument --suite-name: invalid choice: 'resnet' "
                                         "in 'torchbench,resnet'"),
                       usage_error);
  remove_tree(dir.string());
}

TEST_CASE("--suite-name takes one suite or a comma-separated list of them") {
  CHECK(parse({"--suite-name=torchbench,dummy"}).suite_names ==
        std::vector<std::string>{"torchbench", "dummy"});
  CHECK(parse({"--suite-name", "dummy,torchbench"}).suite_names ==
        std::vector<std::string>{"dummy", "torchbench"});
  // Repeated, the last wins (argparse's store), as with the original's single --suite-name.
  CHECK(parse({"--suite-name=torchbench,dummy", "--suite-name=dummy"}).suite_names ==
        std::vector<std::string>{"dummy"});
  CHECK(parse({"--suite-name=dummy"}).suite_name_list() == "dummy");
  CHECK(parse({"--suite-name=torchbench,dummy"}).suite_name_list() == "torchbench,dummy");
  CHECK_THROWS_WITH_AS(parse({"--suite-name=torchbench,resnet"}),
                       "argument --suite-name: invalid choice: 'resnet' in 'torchbench,resnet' "
                       "(choose from 'dummy', 'torchbench', or a comma-separated list of them)",
                       usage_error);
  CHECK_THROWS_WITH_AS(parse({"--suite-name=torchbench,,dummy"}),
                       "argument --suite-name: empty suite name in 'torchbench,,dummy' (choose "
                       "from 'dummy', 'torchbench', or a comma-separated list of them)",
                       usage_error);
  CHECK_THROWS_WITH_AS(parse({"--suite-name=dummy,"}),
                       doctest::Contains("argument --suite-name: empty suite name in 'dummy,'"),
                       usage_error);
  CHECK_THROWS_WITH_AS(parse({"--suite-name=dummy,torchbench,dummy"}),
                       "argument --suite-name: 'dummy' is listed twice in "
                       "'dummy,torchbench,dummy' (name each suite once)",
                       usage_error);
  CHECK_THROWS_WITH_AS(parse({"--suite-name", ""}),
                       "argument --suite-name: invalid choice: '' (choose from 'dummy', "
                       "'torchbench')",
                       usage_error);
  // --model-path belongs to the exported suite, alone or in a list.
  const std::vector<std::string> with_exported = {"dummy", "exported", "torchbench"};
  const auto o = parse_runner_options({"--suite-name=torchbench,exported", "--model-path=m.pt"},
                                      with_exported, "/nonexistent");
  CHECK(o.suite_names == std::vector<std::string>{"torchbench", "exported"});
  CHECK(std::filesystem::path(o.model_path).is_absolute());
  CHECK_THROWS_WITH_AS(parse_runner_options({"--suite-name=torchbench,exported"}, with_exported,
                                            "/nonexistent"),
                       "--suite-name=exported needs --model-path (the TorchScript program)",
                       usage_error);
  CHECK_THROWS_WITH_AS(parse_runner_options({"--suite-name=torchbench,dummy", "--model-path=m.pt"},
                                            with_exported, "/nonexistent"),
                       "--model-path is for --suite-name=exported, not torchbench,dummy",
                       usage_error);
}

namespace {
// The flags of a report program: one nargs='+' positional and one action='extend' flag.
const std::vector<flag_spec> report_specs = {
    {"input_file", 0, flag_action::positional, flag_type::text, {}, false, "", "Results files."},
    {"backends", 0, flag_action::extend, flag_type::text, {"eager", "inductor", "cudagraphs"}, false,
     "", "Backends."},
    {"format", 0, flag_action::store, flag_type::text, {}, false, "csv", "Format."},
};
std::vector<std::string> texts(const std::vector<parsed_flags::value>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) out.push_back(v.value_or("<null>"));
  return out;
}
}  // namespace

TEST_CASE("extend (nargs='+') flags take one or more values per use and accumulate") {
  const auto f = parse_flags(report_specs, {"a.jsonl", "--backends", "eager", "inductor", "--format",
                                            "svg", "--back=cudagraphs", "b.jsonl"});
  CHECK(texts(f.all("backends")) == std::vector<std::string>{"eager", "inductor", "cudagraphs"});
  CHECK(texts(f.all("input_file")) == std::vector<std::string>{"a.jsonl", "b.jsonl"});
  CHECK(**f.last("format") == "svg");
  // as argparse: values after an extend flag are its values, up to the next flag
  CHECK_THROWS_WITH_AS(parse_flags(report_specs, {"--backends", "eager", "x.jsonl"}),
                       "argument --backends: invalid choice: 'x.jsonl' (choose from 'eager', "
                       "'inductor', 'cudagraphs')",
                       usage_error);
}

TEST_CASE("a nargs='+' positional is required and not a flag") {
  CHECK_THROWS_WITH_AS(parse_flags(report_specs, {"--format=csv"}),
                       "the following arguments are required: input_file", usage_error);
  CHECK_THROWS_WITH_AS(parse_flags(report_specs, {"--input_file=a.jsonl"}),
                       "unrecognized arguments: --input_file=a.jsonl", usage_error);
  CHECK_THROWS_AS(parse_flags(report_specs, {"a.jsonl", "--backends"}), usage_error);
  CHECK(usage_line("report", report_specs) ==
        "usage: report [-h] [--backends VALUE [VALUE ...]] [--format VALUE] input_file [input_file ...]");
}
