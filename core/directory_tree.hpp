// Directory walks through POSIX (nftw, opendir) instead of std::filesystem: the PyPI libtorch.so
// exports its own copies of std::filesystem's directory-iterating operations, which crash when they
// win symbol resolution (remove_all segfaulted in the parent, on the CPU and the GPU machine).
#pragma once

#include <string>
#include <vector>

namespace benchmatrix {

/// Removes `path` and everything below it; a missing path is fine. Best effort: never throws.
void remove_tree(const std::string& path);

/// The names of the entries of a directory (no "." or ".."), sorted; empty if it cannot be read.
[[nodiscard]] std::vector<std::string> directory_entries(const std::string& path);

}  // namespace benchmatrix
