#include "output/html_text.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace benchmatrix::html {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool case_insensitive_less(const std::string& a, const std::string& b) {
  const auto la = lower(a), lb = lower(b);
  return la != lb ? la < lb : a < b;
}

std::string utc_text(double seconds) {
  const auto t = static_cast<std::time_t>(std::floor(seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

std::string fixed(double v, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

std::string anchor(const std::string& text) {
  std::string out;
  for (unsigned char c : text) out += std::isalnum(c) ? static_cast<char>(c) : '-';
  return out;
}

}  // namespace benchmatrix::html
