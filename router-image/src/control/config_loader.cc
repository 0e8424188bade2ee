#include "control/config_loader.hh"

#include <fstream>
#include <set>

#include "control/link_fields.hh"
#include "control/xcpi_config_loader.hh"
#include "core/wait_policy.hh"
#include "qdisc/qdisc_factory.hh"
#include "util/json_keys.hh"

namespace xcprouter {

namespace {

using nlohmann::json;

std::string join(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument(where + ": " + what);
}

void only_keys(const json& j, const std::string& where, std::initializer_list<const char*> valid) {
  if (auto u = find_unknown_key(j, valid)) fail(join(where, u->key), "unknown field (valid: " + u->valid + ")");
}

const json& need(const json& j, const std::string& where, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) fail(join(where, key), "required");
  return *it;
}

std::string need_string(const json& j, const std::string& where, const char* key) {
  const json& v = need(j, where, key);
  if (!v.is_string() || v.get<std::string>().empty()) {
    fail(join(where, key), "must be a non-empty string, got " + v.dump());
  }
  return v.get<std::string>();
}

uint64_t need_uint(const json& v, const std::string& where, const std::string& unit) {
  if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0)) {
    fail(where, "must be a non-negative integer (" + unit + "), got " + v.dump());
  }
  return v.get<uint64_t>();
}

MacAddress parse_mac(const json& v, const std::string& where) {
  auto m = v.is_string() ? MacAddress::parse(v.get<std::string>()) : std::nullopt;
  if (!m) fail(where, "must be a MAC address like \"02:00:00:00:01:01\", got " + v.dump());
  return *m;
}

PortConfig parse_port(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, "must be an object");
  only_keys(j, where, {"name", "ifname", "mac", "ipv4", "egress", "ingress", "rx_capacity_bps"});
  PortConfig p;
  p.name = need_string(j, where, "name");
  p.ifname = need_string(j, where, "ifname");
  if (p.ifname.size() > 15) fail(where + ".ifname", "at most 15 characters (IFNAMSIZ), got \"" + p.ifname + "\"");
  if (auto it = j.find("mac"); it != j.end() && !it->is_null()) p.mac = parse_mac(*it, where + ".mac");
  const std::string ip = need_string(j, where, "ipv4");
  auto pre = Ipv4Prefix::parse(ip, /*allow_host_bits=*/true);
  if (!pre) fail(where + ".ipv4", "must be an interface address like \"10.0.1.1/24\", got \"" + ip + "\"");
  p.ipv4 = *pre;
  p.egress = parse_link_config(need(j, where, "egress"), where + ".egress");
  if (auto it = j.find("ingress"); it != j.end() && !it->is_null()) {
    p.ingress = parse_link_config(*it, where + ".ingress");
  }
  p.rx_capacity_bps = read_capacity(j, "rx_capacity_bps", where);
  return p;
}

RouterConfig parse_router(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, "must be an object");
  only_keys(j, where, {"name", "netns", "xcp_address", "ports", "routes", "xcpi"});
  RouterConfig r;
  r.name = need_string(j, where, "name");
  if (auto it = j.find("netns"); it != j.end() && !it->is_null()) r.netns = need_string(j, where, "netns");
  const json& ports = need(j, where, "ports");
  if (!ports.is_array() || ports.empty()) fail(where + ".ports", "must be a non-empty array");
  for (size_t i = 0; i < ports.size(); ++i) {
    r.ports.push_back(parse_port(ports[i], where + ".ports[" + std::to_string(i) + "]"));
  }
  r.xcp_address = r.ports.front().ipv4.addr;
  if (auto it = j.find("xcp_address"); it != j.end() && !it->is_null()) {
    auto a = it->is_string() ? parse_ipv4(it->get<std::string>()) : std::nullopt;
    if (!a) fail(where + ".xcp_address", "must be an IPv4 address like \"10.0.0.1\", got " + it->dump());
    r.xcp_address = *a;
  }
  const json& routes = need(j, where, "routes");
  if (!routes.is_array()) fail(where + ".routes", "must be an array");
  for (size_t i = 0; i < routes.size(); ++i) {
    const std::string w = where + ".routes[" + std::to_string(i) + "]";
    const json& rj = routes[i];
    if (!rj.is_object()) fail(w, "must be an object");
    only_keys(rj, w, {"prefix", "port", "next_hop_mac"});
    RouteConfig rc;
    const std::string prefix = need_string(rj, w, "prefix");
    auto pre = Ipv4Prefix::parse(prefix, /*allow_host_bits=*/false);
    if (!pre) fail(w + ".prefix", "must be a prefix like \"10.0.2.0/24\" with zero host bits, got \"" + prefix + "\"");
    rc.prefix = *pre;
    const std::string port = need_string(rj, w, "port");
    bool found = false;
    std::string names;
    for (size_t k = 0; k < r.ports.size(); ++k) {
      names += (k ? ", " : "") + r.ports[k].name;
      if (r.ports[k].name == port) {
        rc.port = static_cast<uint16_t>(k);
        found = true;
      }
    }
    if (!found) fail(w + ".port", "unknown port \"" + port + "\" (router " + r.name + " has " + names + ")");
    rc.next_hop_mac = parse_mac(need(rj, w, "next_hop_mac"), w + ".next_hop_mac");
    r.routes.push_back(rc);
  }
  if (auto it = j.find("xcpi"); it != j.end() && !it->is_null()) r.xcpi = parse_xcpi_config(*it, where + ".xcpi");
  return r;
}

// The oracle reads the cloud's links from this engine's own routers: every
// link it names must be one of them (engine_per=machine hosts them all).
void check_oracle_links(const EngineConfig& c) {
  for (size_t i = 0; i < c.routers.size(); ++i) {
    const auto& x = c.routers[i].xcpi;
    if (!x) continue;
    for (size_t pi = 0; pi < x->oracle.paths.size(); ++pi) {
      for (size_t li = 0; li < x->oracle.paths[pi].links.size(); ++li) {
        const LinkRef& l = x->oracle.paths[pi].links[li];
        const std::string w = "routers[" + std::to_string(i) + "].xcpi.oracle.paths[" + std::to_string(pi) +
                              "].links[" + std::to_string(li) + "]";
        const RouterConfig* owner = nullptr;
        for (const auto& r : c.routers) {
          if (r.name == l.router) owner = &r;
        }
        if (!owner) fail(w + ".router", "router \"" + l.router + "\" is not in this engine (the oracle reads links of the same engine)");
        const PortConfig* port = nullptr;
        for (const auto& p : owner->ports) {
          if (p.name == l.port) port = &p;
        }
        if (!port) fail(w + ".port", "router " + l.router + " has no port \"" + l.port + "\"");
        if (l.ingress && !port->ingress) fail(w + ".direction", "port " + l.port + " emulates no ingress link");
      }
    }
  }
}

}  // namespace

LinkConfig parse_link_config(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, "must be an object with capacity_bps, delay_us, queue");
  only_keys(j, where, {"capacity_bps", "delay_us", "queue", "loss", "up"});
  need(j, where, "capacity_bps");
  need(j, where, "delay_us");
  const LinkFields f = read_link_fields(j, where);  // the same reader as set_link
  LinkConfig c;
  c.capacity_bps = *f.capacity_bps;
  c.delay = *f.delay;
  if (f.loss) c.loss = *f.loss;
  if (f.up) c.up = *f.up;
  // Read once by the qdisc owner's own reader (the router builds from what it returns);
  // its messages start with "queue." so prefixing our path names the exact field.
  try {
    c.queue = read_queue_config(need(j, where, "queue"));
    check_queue_limit(c.queue.limit, "queue");
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    if (msg.rfind(where, 0) == 0) throw;
    fail(where + "." + msg.substr(0, msg.find(':')), msg.substr(msg.find(':') + 2));
  }
  return c;
}

EngineConfig parse_config(const json& j, const std::string& source) {
  try {
    const std::string where;  // top level: field paths start at the key
    if (!j.is_object()) fail("(document)", "must be a JSON object");
    only_keys(j, where, {"run", "seed", "control_socket", "busy_poll", "spin_us", "cpu_cap", "sched_priority",
                         "lateness_threshold_us", "routers"});
    EngineConfig c;
    if (auto it = j.find("run"); it != j.end() && !it->is_null()) c.run = need_string(j, where, "run");
    c.seed = need_uint(need(j, where, "seed"), "seed", "an unsigned 64-bit integer");
    c.control_socket = need_string(j, where, "control_socket");
    if (c.control_socket.size() > 107) fail("control_socket", "path longer than 107 bytes (sun_path)");
    if (auto it = j.find("busy_poll"); it != j.end()) {
      if (!it->is_boolean()) fail("busy_poll", "must be true or false, got " + it->dump());
      c.busy_poll = it->get<bool>();
    }
    if (auto it = j.find("spin_us"); it != j.end()) {
      const uint64_t us = need_uint(*it, "spin_us", "microseconds");
      if (us > 10'000) fail("spin_us", "at most 10000 (10 ms), got " + std::to_string(us));
      c.spin = xcp::Duration::microseconds(static_cast<int64_t>(us));
    }
    if (auto it = j.find("cpu_cap"); it != j.end()) {
      if (!it->is_number() || !(it->get<double>() >= WaitPolicy::kMinCpuCap && it->get<double>() <= 1.0)) {
        fail("cpu_cap", "must be a number " + std::to_string(WaitPolicy::kMinCpuCap) +
                            "..1.0 (fraction of a core; 1.0 = no budget), got " + it->dump());
      }
      c.cpu_cap = it->get<double>();
    }
    if (auto it = j.find("sched_priority"); it != j.end()) {
      const uint64_t prio = need_uint(*it, "sched_priority", "0 = normal, 1..99 = SCHED_FIFO priority");
      if (prio > 99) fail("sched_priority", "must be 0 (normal) or 1..99 (SCHED_FIFO), got " + std::to_string(prio));
      c.sched_priority = static_cast<int>(prio);
    }
    if (auto it = j.find("lateness_threshold_us"); it != j.end()) {
      c.lateness_threshold = xcp::Duration::microseconds(
          static_cast<int64_t>(need_uint(*it, "lateness_threshold_us", "microseconds")));
    }
    const json& routers = need(j, where, "routers");
    if (!routers.is_array() || routers.empty()) fail("routers", "must be a non-empty array");
    std::set<std::string> router_names, port_names;
    for (size_t i = 0; i < routers.size(); ++i) {
      const std::string w = "routers[" + std::to_string(i) + "]";
      RouterConfig r = parse_router(routers[i], w);
      if (!router_names.insert(r.name).second) fail(w + ".name", "duplicate router name \"" + r.name + "\"");
      for (size_t k = 0; k < r.ports.size(); ++k) {
        if (!port_names.insert(r.ports[k].name).second) {
          fail(w + ".ports[" + std::to_string(k) + "].name", "duplicate port name \"" + r.ports[k].name + "\"");
        }
      }
      c.routers.push_back(std::move(r));
    }
    check_oracle_links(c);
    return c;
  } catch (const std::invalid_argument& e) {
    throw ConfigError(source + ": " + e.what());
  } catch (const json::exception& e) {
    throw ConfigError(source + ": " + e.what());
  }
}

EngineConfig load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open for reading");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw ConfigError(path + ": not valid JSON: " + e.what());
  }
  return parse_config(j, path);
}

}  // namespace xcprouter
