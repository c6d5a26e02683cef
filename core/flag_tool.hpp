// The main() of a command-line tool built on core/argparse.hpp: help, parsing, and the exit status
// conventions every benchmatrix tool shares.
#pragma once

#include "core/argparse.hpp"

#include <functional>
#include <string>
#include <vector>

namespace benchmatrix {

/// -h/--help anywhere prints help_text(program, description, specs) and returns 0. Otherwise
/// `run` gets the parsed flags and its result is returned. A usage_error prints the usage line and
/// "<program>: error: ..." and returns `usage_status` (2, or 3 for regression_gate, whose 2 means
/// "nothing to compare"); any other exception prints "<program>: error: ..." and returns
/// `failure_status` (1, or 2 for tools whose 1 means "found a difference").
int run_flag_tool(const std::string& program, const std::string& description,
                  const std::vector<flag_spec>& specs, const std::vector<std::string>& arguments,
                  const std::function<int(const parsed_flags&)>& run, int failure_status = 1,
                  int usage_status = 2);

}  // namespace benchmatrix
