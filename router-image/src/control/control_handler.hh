// The commands of the control socket (router-image/CONTROL.md): ping, stats,
// set_link, set_queue. Pure request -> response over the routers; never
// throws (every failure becomes {"ok": false, "error": ...}) and does
// bounded work, O(ports), per request.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/router.hh"
#include "xcp/clock.hh"

namespace xcprouter {

class ControlHandler {
 public:
  using FidelityProvider = std::function<nlohmann::json()>;
  // Called between the parts of a long answer (each port of a stats reply):
  // the engine runs the packet events that fell due meanwhile. Building a
  // stats answer for 60 link directions takes milliseconds.
  using Yield = std::function<void()>;

  ControlHandler(std::vector<std::unique_ptr<Router>>& routers, const xcp::Clock& clock, std::string run,
                 FidelityProvider fidelity, Yield yield = {});

  std::string handle(const std::string& line);
  nlohmann::json handle_json(const nlohmann::json& request);

 private:
  nlohmann::json stats(const nlohmann::json& req);
  // The stats answer as text, each router dumped on its own between yields.
  std::string stats_text(const nlohmann::json& req);
  nlohmann::json set_link(const nlohmann::json& req);
  nlohmann::json set_queue(const nlohmann::json& req);
  nlohmann::json xcpi_estimate(const nlohmann::json& req);
  // Resolves router/port/direction of a request; throws std::invalid_argument.
  Link& find_link(const nlohmann::json& req, const char* cmd);

  std::vector<std::unique_ptr<Router>>& routers_;
  const xcp::Clock& clock_;
  std::string run_;
  FidelityProvider fidelity_;
  Yield yield_;
};

}  // namespace xcprouter
