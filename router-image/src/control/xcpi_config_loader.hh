// Reads a router's "xcpi" object (CONFIG.md) into XcpiConfig. Errors are
// std::invalid_argument naming the field path, the value and what is valid.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "xcpi/xcpi_config.hh"

namespace xcprouter {

XcpiConfig parse_xcpi_config(const nlohmann::json& j, const std::string& where);

}  // namespace xcprouter
