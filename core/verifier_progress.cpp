#include "core/verifier_progress.hpp"

#include "core/text_file.hpp"

#include <iomanip>
#include <sstream>

namespace benchmatrix {

std::filesystem::path verifier_progress_path(const std::filesystem::path& result_path) {
  return result_path.parent_path() / "verifier_progress";
}

void write_verifier_progress(const std::filesystem::path& path, const verifier_progress& progress) {
  std::ostringstream text;
  text << progress.step << '\n' << std::setprecision(6);
  for (const auto& [run, seconds] : progress.finished) text << run << ' ' << seconds << '\n';
  replace_text_file(path, text.str());
}

std::optional<verifier_progress> read_verifier_progress(const std::filesystem::path& path) {
  std::istringstream in(read_text_file(path));
  verifier_progress progress;
  if (!std::getline(in, progress.step) || progress.step.empty()) return std::nullopt;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string run;
    double seconds = 0;
    if (!(fields >> run >> seconds) || !(fields >> std::ws).eof()) return std::nullopt;
    progress.finished.emplace_back(run, seconds);
  }
  return progress;
}

std::string describe_verifier_progress(const verifier_progress& progress) {
  std::ostringstream text;
  text << "in its " << progress.step << std::setprecision(3);
  for (size_t i = 0; i < progress.finished.size(); ++i)
    text << (i ? ", " : "; finished: ") << progress.finished[i].first << ' '
         << progress.finished[i].second << " s";
  return text.str();
}

}  // namespace benchmatrix
