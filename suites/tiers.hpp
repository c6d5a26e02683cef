// TorchBench model tiers of the PyTorch/XLA runner (tiers.py): --filter-by-tier/--exclude-by-tier
// append these anchored alternations to --filter/--exclude.
#pragma once

#include <optional>
#include <string>

namespace benchmatrix {

/// The regex `^(a|b|...)$` of tier 1, 2 or 3; nullopt for other numbers (the original ignores them).
[[nodiscard]] std::optional<std::string> tier_regex(long long tier);

}  // namespace benchmatrix
