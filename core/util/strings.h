// Small string helpers shared by error messages.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace conveyor {

// Levenshtein distance.
size_t EditDistance(std::string_view a, std::string_view b);

// "; did you mean \"x\"?" for the closest candidate within a small distance, else "".
std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates);

std::string Join(const std::vector<std::string>& parts, std::string_view sep);

}  // namespace conveyor
