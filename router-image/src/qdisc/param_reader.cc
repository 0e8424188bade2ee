#include "qdisc/param_reader.hh"

#include <algorithm>
#include <stdexcept>

namespace xcprouter {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "(none)" : out;
}

}  // namespace

ParamReader::ParamReader(const nlohmann::json& obj, std::string context)
    : obj_(obj), context_(std::move(context)) {
  if (!obj_.is_null() && !obj_.is_object()) {
    throw std::invalid_argument(context_ + ": must be an object of parameters, got " + obj_.dump());
  }
}

const nlohmann::json* ParamReader::find(std::string_view key) {
  asked_.emplace_back(key);
  if (obj_.is_null()) return nullptr;
  auto it = obj_.find(std::string(key));
  return it == obj_.end() ? nullptr : &*it;
}

std::optional<double> ParamReader::number(std::string_view key, const Bound& b) {
  const nlohmann::json* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw std::invalid_argument(field(key) + ": must be a number, " + b.describe() + ", got " + v->dump());
  const double x = v->get<double>();
  if (!b.contains(x)) throw std::invalid_argument(field(key) + ": " + v->dump() + " out of range, valid " + b.describe());
  return x;
}

std::optional<bool> ParamReader::boolean(std::string_view key) {
  const nlohmann::json* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) throw std::invalid_argument(field(key) + ": must be true or false, got " + v->dump());
  return v->get<bool>();
}

std::optional<std::string> ParamReader::choice(std::string_view key,
                                               std::initializer_list<std::string_view> valid) {
  const nlohmann::json* v = find(key);
  if (!v) return std::nullopt;
  std::vector<std::string> names(valid.begin(), valid.end());
  if (v->is_string()) {
    const auto s = v->get<std::string>();
    if (std::find(names.begin(), names.end(), s) != names.end()) return s;
  }
  throw std::invalid_argument(field(key) + ": " + v->dump() + " is not valid, valid values: " + join(names));
}

void ParamReader::finish() const {
  if (obj_.is_null()) return;
  for (const auto& [k, _] : obj_.items()) {
    if (std::find(asked_.begin(), asked_.end(), k) == asked_.end()) {
      throw std::invalid_argument(field(k) + ": unknown parameter, valid: " + join(asked_));
    }
  }
}

}  // namespace xcprouter
