#include "backends/inductor_program.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace benchmatrix {

inductor_program inductor_program_choice() {
  const char* value = std::getenv("BENCHMATRIX_INDUCTOR_PROGRAM");
  const std::string choice = value ? value : "";
  if (choice.empty() || choice == "exported") return inductor_program::exported;
  if (choice == "traced") return inductor_program::traced;
  throw std::invalid_argument("BENCHMATRIX_INDUCTOR_PROGRAM=" + choice +
                              ": expected exported (the default) or traced");
}

}  // namespace benchmatrix
