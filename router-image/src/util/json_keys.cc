#include "util/json_keys.hh"

namespace xcprouter {

std::optional<UnknownKey> find_unknown_key(const nlohmann::json& j,
                                           std::initializer_list<const char*> valid) {
  for (const auto& [k, _] : j.items()) {
    bool known = false;
    for (const char* v : valid) known = known || k == v;
    if (known) continue;
    std::string list;
    for (const char* v : valid) list += list.empty() ? v : std::string(", ") + v;
    return UnknownKey{k, list};
  }
  return std::nullopt;
}

}  // namespace xcprouter
