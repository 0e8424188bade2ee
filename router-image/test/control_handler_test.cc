#include "control/control_handler.hh"

#include <gtest/gtest.h>

#include "contract_bounds.hh"
#include "control/config_loader.hh"
#include "engine_test_util.hh"
#include "xcp/clock.hh"

namespace xcprouter {
namespace {

using enginetest::CollectingSink;
using nlohmann::json;

RouterConfig one_port_router() {
  RouterConfig c;
  c.name = "r1";
  PortConfig p;
  p.name = "r1:a";
  p.ifname = "eth0";
  p.mac = MacAddress::parse("02:00:00:00:00:02");
  p.ipv4 = *Ipv4Prefix::parse("10.0.0.2/24", true);
  p.egress.capacity_bps = 10'000'000;
  p.egress.delay = xcp::Duration::milliseconds(1);
  p.egress.queue = read_queue_config({{"kind", "droptail"}, {"limit_packets", 50}});
  c.ports = {p};
  return c;
}

struct Fixture {
  Fixture() {
    routers.push_back(std::make_unique<Router>(one_port_router(), 1, 0, std::vector<PacketSink*>{&tx}));
  }
  json ask(const std::string& line) { return json::parse(handler.handle(line)); }
  xcp::FakeClock clock;
  CollectingSink tx;
  std::vector<std::unique_ptr<Router>> routers;
  ControlHandler handler{routers, clock, "run-1", [] { return json{{"late_timers", 0}}; }};
};

TEST(ControlHandler, Ping) {
  Fixture f;
  f.clock.set(xcp::Timestamp::from_ns(123));
  const json r = f.ask(R"({"cmd":"ping"})");
  EXPECT_EQ(r["ok"], true);
  EXPECT_EQ(r["time_ns"], 123);
}

TEST(ControlHandler, StatsShape) {
  Fixture f;
  const json r = f.ask(R"({"cmd":"stats"})");
  ASSERT_EQ(r["ok"], true);
  EXPECT_EQ(r["run"], "run-1");
  EXPECT_EQ(r["fidelity"]["late_timers"], 0);
  const json& port = r["routers"]["r1"]["ports"]["r1:a"];
  EXPECT_EQ(port["egress"]["config"]["capacity_bps"], 10000000u);
  EXPECT_EQ(f.ask(R"({"cmd":"stats","router":"r9"})")["ok"], false);
}

TEST(ControlHandler, StatsYieldsToThePacketPathBetweenPorts) {
  // A stats answer for many ports takes milliseconds to build; the engine's
  // due link events run at each yield instead of waiting for the whole answer.
  RouterConfig c = one_port_router();
  for (int i = 1; i < 4; ++i) {
    PortConfig p = c.ports[0];
    p.name = "r1:p" + std::to_string(i);
    p.ifname = "eth" + std::to_string(i);
    p.ipv4 = *Ipv4Prefix::parse("10.0." + std::to_string(i) + ".2/24", true);
    c.ports.push_back(p);
  }
  xcp::FakeClock clock;
  CollectingSink tx;
  std::vector<std::unique_ptr<Router>> routers;
  routers.push_back(std::make_unique<Router>(c, 1, 0, std::vector<PacketSink*>(4, &tx)));
  int yields = 0, fidelity_calls = 0;
  ControlHandler handler{routers, clock, "run-1", [&] { ++fidelity_calls; return json::object(); },
                         [&] { ++yields; }};
  const json r = json::parse(handler.handle(R"({"cmd":"stats"})"));
  ASSERT_EQ(r["ok"], true);
  EXPECT_EQ(r["routers"]["r1"]["ports"].size(), 4u);
  // once before each of the 4 ports, then around the fidelity figures
  EXPECT_EQ(yields, 6);
  EXPECT_EQ(fidelity_calls, 1);
  // the other commands answer without yielding
  yields = 0;
  EXPECT_EQ(json::parse(handler.handle(R"({"cmd":"ping"})"))["ok"], true);
  EXPECT_EQ(yields, 0);
}

TEST(ControlHandler, SetLinkAppliesLive) {
  Fixture f;
  const json r = f.ask(
      R"({"cmd":"set_link","router":"r1","port":"r1:a","capacity_bps":20000000,"delay_us":7000,)"
      R"("limit_packets":9,"loss":{"model":"bernoulli","p":0.25},"up":false})");
  ASSERT_EQ(r["ok"], true) << r.dump();
  Link& l = f.routers[0]->egress(0);
  EXPECT_EQ(l.capacity(), xcp::Rate::from_megabits_per_s(20));
  EXPECT_EQ(l.qdisc().capacity(), xcp::Rate::from_megabits_per_s(20));
  EXPECT_EQ(l.delay(), xcp::Duration::milliseconds(7));
  EXPECT_EQ(l.qdisc().limit().packets, 9u);
  EXPECT_EQ(l.loss_config().p, 0.25);
  EXPECT_FALSE(l.up());
  EXPECT_EQ(r["link"]["up"], false);
}

TEST(ControlHandler, InvalidSetLinkChangesNothing) {
  Fixture f;
  const json r = f.ask(R"({"cmd":"set_link","router":"r1","port":"r1:a","capacity_bps":5,"loss":{"model":"x"}})");
  EXPECT_EQ(r["ok"], false);
  EXPECT_EQ(f.routers[0]->egress(0).capacity(), xcp::Rate::from_megabits_per_s(10));
}

TEST(ControlHandler, ErrorsNameWhatIsWrong) {
  Fixture f;
  auto error = [&](const std::string& line) { return f.ask(line)["error"].get<std::string>(); };
  EXPECT_NE(error("not json").find("not valid JSON"), std::string::npos);
  EXPECT_EQ(error(R"({"cmd":"reboot"})"), "unknown cmd 'reboot' (valid: ping, stats, set_link, set_queue, xcpi_estimate)");
  EXPECT_EQ(error(R"({"cmd":"set_link","router":"r1","port":"r1:z"})"),
            "set_link: unknown port 'r1:z' (router r1 has r1:a)");
  EXPECT_EQ(error(R"({"cmd":"set_link","router":"r2","port":"r1:a"})"), "set_link: unknown router 'r2' (valid: r1)");
  EXPECT_EQ(error(R"({"cmd":"set_link","router":"r1","port":"r1:a","direction":"ingress"})"),
            "set_link: port 'r1:a' has no ingress link configured");
  EXPECT_EQ(error(R"({"cmd":"set_link","router":"r1","port":"r1:a","capacity_bps":-1})"),
            "set_link.capacity_bps: must be an integer in [1000, 1e+11] bps (" +
                std::string(bounds::kLinkCapacityBps.why) + "), got -1");
  EXPECT_EQ(error(R"({"cmd":"set_link","router":"r1","port":"r1:a","limit_packets":0})"),
            "set_link: needs limit_packets or limit_bytes > 0 (an unbounded buffer is not a link)");
  EXPECT_NE(error(R"({"cmd":"set_link","router":"r1","port":"r1:a","speed":1})").find("unknown field 'speed'"),
            std::string::npos);
  EXPECT_EQ(error(R"({"cmd":"set_queue","router":"r1","port":"r1:a"})"), "set_queue: params (object) is required");
}

// Load time and set_link read a link's fields with one reader (control/link_fields.hh):
// the same value is refused by both, in the same words, at the shared table's bounds.
TEST(ControlHandler, SetLinkAndConfigRefuseTheSameValuesInTheSameWords) {
  struct Case {
    const char* field;
    json value;
  };
  const double cap_hi = bounds::kLinkCapacityBps.hi, delay_hi_us = bounds::kLinkDelayS.hi * 1e6;
  for (const Case& c : {Case{"capacity_bps", json(static_cast<uint64_t>(bounds::kLinkCapacityBps.lo) - 1)},
                        Case{"capacity_bps", json(static_cast<uint64_t>(cap_hi) + 1)},
                        Case{"delay_us", json(static_cast<uint64_t>(delay_hi_us) + 1)},
                        Case{"delay_us", json(-1)},
                        Case{"up", json("yes")}}) {
    Fixture f;
    json req = {{"cmd", "set_link"}, {"router", "r1"}, {"port", "r1:a"}, {c.field, c.value}};
    const std::string live = f.ask(req.dump())["error"].get<std::string>();
    json link = {{"capacity_bps", 10'000'000}, {"delay_us", 1000}, {"queue", {{"kind", "droptail"}, {"limit_packets", 5}}}};
    link[c.field] = c.value;
    std::string loaded;
    try {
      parse_link_config(link, "egress");
    } catch (const std::invalid_argument& e) {
      loaded = e.what();
    }
    ASSERT_EQ(live.rfind("set_link.", 0), 0u) << live;
    ASSERT_EQ(loaded.rfind("egress.", 0), 0u) << c.field << " " << c.value << " accepted at load";
    EXPECT_EQ(live.substr(std::string("set_link").size()), loaded.substr(std::string("egress").size()));
  }
  // ... and the edges of the table are accepted by both.
  Fixture f;
  EXPECT_EQ(f.ask(json{{"cmd", "set_link"}, {"router", "r1"}, {"port", "r1:a"},
                       {"capacity_bps", static_cast<uint64_t>(cap_hi)}, {"delay_us", static_cast<uint64_t>(delay_hi_us)}}
                      .dump())["ok"],
            true);
}

}  // namespace
}  // namespace xcprouter
