#include "core/directory_tree.hpp"

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>

#include <algorithm>

namespace benchmatrix {

void remove_tree(const std::string& path) {
  // FTW_DEPTH: children before their directory; FTW_PHYS: never follow symbolic links.
  constexpr int max_open_directories = 16;
  ::nftw(
      path.c_str(),
      [](const char* entry, const struct stat*, int, struct FTW*) {
        ::remove(entry);
        return 0;  // keep going whatever happens
      },
      max_open_directories, FTW_DEPTH | FTW_PHYS);
}

std::vector<std::string> directory_entries(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace benchmatrix
