#include "core/precision_axes.hpp"

#include <algorithm>
#include <stdexcept>

namespace benchmatrix {
namespace {

template <std::size_t N> std::string joined(const std::array<std::string_view, N>& names) {
  std::string out;
  for (const auto name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace

bool is_precision_name(std::string_view name) {
  return std::find(precision_names.begin(), precision_names.end(), name) != precision_names.end();
}

bool is_inductor_mode_name(std::string_view name) {
  return std::find(inductor_mode_names.begin(), inductor_mode_names.end(), name) !=
         inductor_mode_names.end();
}

bool is_axis_name(std::string_view key, std::string_view name) {
  if (key == "precision") return is_precision_name(name);
  if (key == "inductor_mode") return is_inductor_mode_name(name);
  throw std::invalid_argument("no axis named '" + std::string(key) + "'");
}

std::string axis_name_list(std::string_view key) {
  if (key == "precision") return precision_name_list();
  if (key == "inductor_mode") return inductor_mode_name_list();
  throw std::invalid_argument("no axis named '" + std::string(key) + "'");
}

std::vector<std::string> precision_choices() {
  return {precision_names.begin(), precision_names.end()};
}

std::vector<std::string> inductor_mode_choices() {
  return {inductor_mode_names.begin(), inductor_mode_names.end()};
}

std::string precision_name_list() { return joined(precision_names); }
std::string inductor_mode_name_list() { return joined(inductor_mode_names); }

}  // namespace benchmatrix
