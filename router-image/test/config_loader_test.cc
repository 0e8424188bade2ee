#include "control/config_loader.hh"

#include <gtest/gtest.h>

namespace xcprouter {
namespace {

using nlohmann::json;

json valid() {
  return json::parse(R"({
    "run": "t", "seed": 42, "control_socket": "/tmp/x.sock",
    "routers": [{
      "name": "r1", "netns": "/run/netns/xcplab-x-r1",
      "ports": [
        {"name": "r1:a", "ifname": "eth0", "mac": "02:00:00:00:00:02", "ipv4": "10.0.0.2/24",
         "egress": {"capacity_bps": 10000000, "delay_us": 5000,
                    "queue": {"kind": "droptail", "limit_packets": 100, "limit_bytes": 0, "params": {}},
                    "loss": {"model": "bernoulli", "p": 0.01}},
         "ingress": {"capacity_bps": 10000000, "delay_us": 5000,
                     "queue": {"kind": "droptail", "limit_packets": 100}}},
        {"name": "r1:b", "ifname": "eth1", "ipv4": "10.0.1.1/24", "rx_capacity_bps": 1000000000,
         "egress": {"capacity_bps": 10000000, "delay_us": 0,
                    "queue": {"kind": "droptail", "limit_bytes": 150000}, "up": false}}
      ],
      "routes": [{"prefix": "10.0.1.0/24", "port": "r1:b", "next_hop_mac": "02:00:00:00:01:02"},
                 {"prefix": "0.0.0.0/0", "port": "r1:a", "next_hop_mac": "02:00:00:00:00:01"}]
    }]})");
}

TEST(ConfigLoader, ParsesTheDocumentedShape) {
  const EngineConfig c = parse_config(valid(), "f.json");
  EXPECT_EQ(c.seed, 42u);
  EXPECT_FALSE(c.busy_poll);
  EXPECT_FALSE(c.cpu_cap.has_value());  // derived from the kernel's real-time budget
  json capped = valid();
  capped["cpu_cap"] = 0.8;
  EXPECT_EQ(parse_config(capped, "f.json").cpu_cap, 0.8);
  ASSERT_EQ(c.routers.size(), 1u);
  const RouterConfig& r = c.routers[0];
  EXPECT_EQ(r.netns, "/run/netns/xcplab-x-r1");
  EXPECT_EQ(r.xcp_address, 0x0A000002u);  // defaults to the first port's address
  ASSERT_EQ(r.ports.size(), 2u);
  EXPECT_EQ(r.ports[0].egress.capacity_bps, 10000000u);
  EXPECT_EQ(r.ports[0].egress.delay, xcp::Duration::milliseconds(5));
  EXPECT_EQ(r.ports[0].egress.loss.model, LossConfig::Model::kBernoulli);
  EXPECT_TRUE(r.ports[0].ingress.has_value());
  EXPECT_FALSE(r.ports[1].mac.has_value());
  EXPECT_FALSE(r.ports[1].ingress.has_value());
  EXPECT_FALSE(r.ports[1].egress.up);
  // the receive rate: given (a faster peer), else the larger of egress and ingress
  EXPECT_EQ(r.ports[1].rx_rate(), xcp::Rate::from_bits_per_s(1e9));
  EXPECT_FALSE(r.ports[0].rx_capacity_bps.has_value());
  EXPECT_EQ(r.ports[0].rx_rate(), xcp::Rate::from_bits_per_s(1e7));
  ASSERT_EQ(r.routes.size(), 2u);
  EXPECT_EQ(r.routes[0].port, 1);
  EXPECT_EQ(r.routes[1].prefix.len, 0);
}

struct BadCase {
  const char* name;
  void (*mutate)(json&);
  const char* message;
};

class ConfigLoaderBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ConfigLoaderBad, NamesFileFieldAndWhatIsValid) {
  json j = valid();
  GetParam().mutate(j);
  try {
    parse_config(j, "f.json");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, std::string(GetParam().message).size()), GetParam().message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConfigLoaderBad,
    ::testing::Values(
        BadCase{"no_seed", [](json& j) { j.erase("seed"); }, "f.json: seed: required"},
        BadCase{"typo_key", [](json& j) { j["busypoll"] = true; }, "f.json: busypoll: unknown field"},
        BadCase{"neg_capacity", [](json& j) { j["routers"][0]["ports"][0]["egress"]["capacity_bps"] = -5; },
                "f.json: routers[0].ports[0].egress.capacity_bps: must be an integer in [1000, 1e+11] bps"},
        BadCase{"zero_capacity", [](json& j) { j["routers"][0]["ports"][0]["egress"]["capacity_bps"] = 0; },
                "f.json: routers[0].ports[0].egress.capacity_bps: 0 out of range, valid an integer in [1000, 1e+11] bps"},
        BadCase{"zero_rx_capacity", [](json& j) { j["routers"][0]["ports"][1]["rx_capacity_bps"] = 0; },
                "f.json: routers[0].ports[1].rx_capacity_bps: 0 out of range, valid an integer in [1000, 1e+11] bps"},
        BadCase{"bad_mac", [](json& j) { j["routers"][0]["ports"][0]["mac"] = "02:00"; },
                "f.json: routers[0].ports[0].mac: must be a MAC address"},
        BadCase{"bad_ipv4", [](json& j) { j["routers"][0]["ports"][1]["ipv4"] = "10.0.1.1"; },
                "f.json: routers[0].ports[1].ipv4: must be an interface address"},
        BadCase{"host_bits", [](json& j) { j["routers"][0]["routes"][0]["prefix"] = "10.0.1.1/24"; },
                "f.json: routers[0].routes[0].prefix: must be a prefix"},
        BadCase{"unknown_port", [](json& j) { j["routers"][0]["routes"][0]["port"] = "r1:z"; },
                "f.json: routers[0].routes[0].port: unknown port \"r1:z\" (router r1 has r1:a, r1:b)"},
        BadCase{"bad_queue_kind", [](json& j) { j["routers"][0]["ports"][1]["egress"]["queue"]["kind"] = "fifo"; },
                "f.json: routers[0].ports[1].egress.queue.kind: "},
        BadCase{"unbounded_queue", [](json& j) { j["routers"][0]["ports"][1]["egress"]["queue"] = {{"kind", "droptail"}}; },
                "f.json: routers[0].ports[1].egress.queue: needs limit_packets or limit_bytes > 0"},
        BadCase{"bad_loss", [](json& j) { j["routers"][0]["ports"][0]["egress"]["loss"]["p"] = 2; },
                "f.json: routers[0].ports[0].egress.loss.p: must be a number in [0, 1]"},
        BadCase{"dup_port", [](json& j) { j["routers"][0]["ports"][1]["name"] = "r1:a"; j["routers"][0]["routes"][0]["port"] = "r1:a"; },
                "f.json: routers[0].ports[1].name: duplicate port name"},
        BadCase{"cpu_cap_low", [](json& j) { j["cpu_cap"] = 0.3; }, "f.json: cpu_cap: must be a number 0.500000..1.0"},
        BadCase{"cpu_cap_text", [](json& j) { j["cpu_cap"] = "all"; }, "f.json: cpu_cap: must be a number 0.500000..1.0"},
        BadCase{"no_routers", [](json& j) { j["routers"] = json::array(); }, "f.json: routers: must be a non-empty array"},
        BadCase{"long_ifname", [](json& j) { j["routers"][0]["ports"][0]["ifname"] = "a-very-long-interface"; },
                "f.json: routers[0].ports[0].ifname: at most 15 characters"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ConfigLoader, MissingFileAndBadJsonNameTheFile) {
  EXPECT_THROW(load_config("/nonexistent/xcp.json"), ConfigError);
  try {
    load_config("/nonexistent/xcp.json");
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/xcp.json: cannot open for reading");
  }
}

}  // namespace
}  // namespace xcprouter
