// Reads and validates the engine configuration (router-image/CONFIG.md).
// Every error is a ConfigError "FILE: FIELD.PATH: what is valid".
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/router_config.hh"

namespace xcprouter {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `source` names the input in messages (the file path).
EngineConfig parse_config(const nlohmann::json& j, const std::string& source);
EngineConfig load_config(const std::string& path);

// One link object (egress/ingress); `where` is its field path. Throws
// std::invalid_argument("where.field: ..."). Its link fields are read by
// read_link_fields (control/link_fields.hh), as the control socket's set_link's are.
LinkConfig parse_link_config(const nlohmann::json& j, const std::string& where);

}  // namespace xcprouter
