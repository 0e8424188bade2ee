// Rejecting unknown keys in JSON objects (config file, control requests, loss
// models): one rule for finding the first unknown key and listing the valid ones,
// so every caller's error says what would be valid in the same way.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace xcprouter {

struct UnknownKey {
  std::string key;
  std::string valid;  // "a, b, c"
};

// The first key of `j` not among `valid`, with the valid ones listed; nullopt if none.
std::optional<UnknownKey> find_unknown_key(const nlohmann::json& j,
                                           std::initializer_list<const char*> valid);

}  // namespace xcprouter
