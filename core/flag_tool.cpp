#include "core/flag_tool.hpp"

#include <exception>
#include <iostream>

namespace benchmatrix {

int run_flag_tool(const std::string& program, const std::string& description,
                  const std::vector<flag_spec>& specs, const std::vector<std::string>& arguments,
                  const std::function<int(const parsed_flags&)>& run, int failure_status,
                  int usage_status) {
  for (const auto& a : arguments)
    if (a == "-h" || a == "--help") {
      std::cout << help_text(program, description, specs);
      return 0;
    }
  try {
    return run(parse_flags(specs, arguments));
  } catch (const usage_error& e) {
    std::cerr << usage_line(program, specs) << "\n" << program << ": error: " << e.what() << "\n";
    return usage_status;
  } catch (const std::exception& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return failure_status;
  }
}

}  // namespace benchmatrix
