// Validated reading of a queue discipline's JSON "params" object.
//
// Every parameter is read once through this class, which checks type and
// range and remembers which keys were consumed, so finish() can reject
// unknown keys with the list of valid ones. Errors are std::invalid_argument
// whose message names the field path (e.g. "queue.params.max_p"), the value
// and what would be valid — the planner and the control socket show it as is.
// Every range is a row of the bound table shared with the spec validator
// (qdisc/bound.hh, contract_bounds.hh), so the engine and `xcplab validate`
// accept the same values.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "qdisc/bound.hh"
#include "xcp/units.hh"

namespace xcprouter {

class ParamReader {
 public:
  // `obj` must be a JSON object or null (= no params); `context` prefixes
  // every error message ("queue.params").
  ParamReader(const nlohmann::json& obj, std::string context);

  // A number within `b`; nullopt when absent.
  std::optional<double> number(std::string_view key, const Bound& b);
  double number_or(std::string_view key, double fallback, const Bound& b) {
    return number(key, b).value_or(fallback);
  }
  std::optional<bool> boolean(std::string_view key);
  // A duration given in seconds, within `b`; `fallback` when absent.
  xcp::Duration seconds_or(std::string_view key, xcp::Duration fallback, const Bound& b) {
    const auto v = number(key, b);
    return v ? xcp::Duration::seconds(*v) : fallback;
  }
  // One of `valid`; nullopt when absent.
  std::optional<std::string> choice(std::string_view key, std::initializer_list<std::string_view> valid);

  // Throws when `obj` held a key that no call above asked for.
  void finish() const;

  std::string field(std::string_view key) const { return context_ + "." + std::string(key); }

 private:
  const nlohmann::json* find(std::string_view key);

  const nlohmann::json& obj_;
  std::string context_;
  std::vector<std::string> asked_;
};

}  // namespace xcprouter
