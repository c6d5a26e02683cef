// experiment_runner's command line: the flag table (argparse rules, core/argparse.hpp) and the parse
// into runner_options, with a --matrix preset (YAML) supplying the flags the command line leaves out.
#pragma once

#include "core/argparse.hpp"
#include "runner/runner_options.hpp"

#include <string>
#include <vector>

namespace benchmatrix {

/// The flag table of experiment_runner; `suites` are the --suite-name choices (its help lists
/// them; parse_suite_names checks each name of the list).
[[nodiscard]] std::vector<flag_spec> runner_flag_specs(const std::vector<std::string>& suites);

/// --suite-name's value: one of `suites`, or a comma-separated list of them (order kept). Throws
/// usage_error naming the unknown, empty or repeated name and the valid ones.
[[nodiscard]] std::vector<std::string> parse_suite_names(const std::string& text,
                                                         const std::vector<std::string>& suites);

/// Parses argv[1..]: command line, then the --matrix preset for flags the command line left out,
/// then argparse's post-processing (tiers into filters, defaults). Throws usage_error.
/// `config_dir` is where presets named without a path are found (<config_dir>/matrices/<name>.yaml).
[[nodiscard]] runner_options parse_runner_options(const std::vector<std::string>& arguments,
                                                  const std::vector<std::string>& suites,
                                                  const std::string& config_dir);

}  // namespace benchmatrix
