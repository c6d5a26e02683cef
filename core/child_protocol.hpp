// How the parent talks to its children: the environment variables that carry a child's result
// channel and its role.
#pragma once

namespace benchmatrix {

/// Environment variable naming the file a child writes its record to (the result channel).
inline constexpr const char* result_path_variable = "BENCHMATRIX_RESULT_PATH";
/// Set to "verifier" in the environment of a config's verifier child (--verify); unset in its
/// timing child.
inline constexpr const char* child_role_variable = "BENCHMATRIX_CHILD_ROLE";

}  // namespace benchmatrix
