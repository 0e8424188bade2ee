// xcpperf's command line: --loss-recovery parsing, and the real binary's
// answer to a bad value (message naming the option and the valid values,
// usage exit code).
#include "app/options.hh"

#include "app/host_stack.hh"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

namespace xcphost {
namespace {

ParsedOptions parse(std::vector<std::string_view> args) { return parse_options(args); }

TEST(Options, LossRecoveryDefaultsToSackAndAcceptsEachMode) {
  const auto def = parse({"-c", "10.0.0.2"});
  ASSERT_TRUE(std::holds_alternative<Options>(def));
  EXPECT_EQ(std::get<Options>(def).loss_recovery, LossRecovery::kSack);
  for (auto [text, mode] : {std::pair{"sack", LossRecovery::kSack}, std::pair{"newreno", LossRecovery::kNewReno},
                            std::pair{"reno", LossRecovery::kReno}}) {
    const auto p = parse({"-c", "10.0.0.2", "--loss-recovery", text});
    ASSERT_TRUE(std::holds_alternative<Options>(p)) << text;
    EXPECT_EQ(std::get<Options>(p).loss_recovery, mode);
    EXPECT_EQ(connection_config(std::get<Options>(p)).loss_recovery, mode);
  }
}

TEST(Options, ParallelCarriesUpTo1024StreamsInOneProcess) {
  // seed 001 goes to n = 1024 long flows: one process, n connections
  const auto p = parse({"-c", "10.0.0.2", "-P", "1024"});
  ASSERT_TRUE(std::holds_alternative<Options>(p));
  EXPECT_EQ(std::get<Options>(p).parallel, 1024u);
  const auto bad = parse({"-c", "10.0.0.2", "-P", "1025"});
  ASSERT_TRUE(std::holds_alternative<std::string>(bad));
  EXPECT_NE(std::get<std::string>(bad).find("1..1024"), std::string::npos);
}

// 1024 streams x 16 MiB (the one-stream default) would be 16 GiB to allocate
// and fill before the handshakes are served; they failed with "no answer to
// SYN". Without -w the streams share kClientSendBudgetBytes; -w x -P is bounded.
TEST(Options, StreamsShareABoundedSendBudget) {
  const auto one = parse({"-c", "10.0.0.2"});
  const auto many = parse({"-c", "10.0.0.2", "-P", "1024"});
  ASSERT_TRUE(std::holds_alternative<Options>(one));
  ASSERT_TRUE(std::holds_alternative<Options>(many));
  EXPECT_EQ(connection_config(std::get<Options>(one)).send_buffer_bytes, size_t{16} << 20);
  EXPECT_EQ(connection_config(std::get<Options>(parse({"-c", "10.0.0.2", "-P", "16"}))).send_buffer_bytes,
            size_t{16} << 20);
  EXPECT_EQ(connection_config(std::get<Options>(many)).send_buffer_bytes, size_t{256} << 10);
  EXPECT_LE(uint64_t{connection_config(std::get<Options>(many)).send_buffer_bytes} * 1024, kClientSendBudgetBytes);
  // An explicit -w is taken as given while -w x -P stays within 4 GiB.
  const auto w = parse({"-c", "10.0.0.2", "-P", "1024", "-w", "4M"});
  ASSERT_TRUE(std::holds_alternative<Options>(w));
  EXPECT_EQ(connection_config(std::get<Options>(w)).send_buffer_bytes, size_t{4} << 20);
  const auto bad = parse({"-c", "10.0.0.2", "-P", "1024", "-w", "5M"});
  ASSERT_TRUE(std::holds_alternative<std::string>(bad));
  EXPECT_NE(std::get<std::string>(bad).find("-w x -P <= 4 GiB"), std::string::npos) << std::get<std::string>(bad);
}

TEST(Options, BadLossRecoveryNamesTheOptionAndTheValidValues) {
  const auto p = parse({"-s", "--loss-recovery", "x"});
  ASSERT_TRUE(std::holds_alternative<std::string>(p));
  const std::string& err = std::get<std::string>(p);
  EXPECT_NE(err.find("--loss-recovery"), std::string::npos) << err;
  EXPECT_NE(err.find("sack, newreno, reno"), std::string::npos) << err;
  EXPECT_NE(err.find("'x'"), std::string::npos) << err;
  const auto missing = parse({"-s", "--loss-recovery"});
  ASSERT_TRUE(std::holds_alternative<std::string>(missing));
  EXPECT_NE(std::get<std::string>(missing).find("--loss-recovery"), std::string::npos);
}

#ifdef XCPPERF_PATH
TEST(Options, XcpperfExitsWithTheUsageCodeOnABadLossRecovery) {
  const std::string cmd = std::string(XCPPERF_PATH) + " -c 127.0.0.1 --loss-recovery x 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string out;
  std::array<char, 512> buf{};
  while (size_t n = std::fread(buf.data(), 1, buf.size(), f)) out.append(buf.data(), n);
  const int status = pclose(f);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kExitUsage);
  EXPECT_NE(out.find("--loss-recovery: expected one of sack, newreno, reno (got 'x')"), std::string::npos) << out;
}
#endif

// The XCP-i receiver duty takes the cloud path's capacity, bounded like a
// link's capacity; anything else is a usage error naming the option.
TEST(Options, XcpiReceiverCloudTakesABoundedCapacity) {
  const auto ok = parse({"-s", "--xcpi-receiver-cloud", "30M"});
  ASSERT_TRUE(std::holds_alternative<Options>(ok));
  EXPECT_DOUBLE_EQ(std::get<Options>(ok).xcpi_receiver_cloud.bits_per_s(), 30e6);
  EXPECT_TRUE(std::get<Options>(parse({"-s"})).xcpi_receiver_cloud.is_zero());
  for (const char* bad : {"0", "999", "200G", "x"}) {
    const auto r = parse({"-s", "--xcpi-receiver-cloud", bad});
    ASSERT_TRUE(std::holds_alternative<std::string>(r)) << bad;
    EXPECT_NE(std::get<std::string>(r).find("--xcpi-receiver-cloud"), std::string::npos) << bad;
  }
}

// The chirp estimator's duty takes H (the access link), bounded; one estimator.
TEST(Options, XcpiReceiverChirpTakesABoundedRateAndExcludesTheCapacityOracle) {
  const auto ok = parse({"-s", "--xcpi-receiver-chirp", "80M"});
  ASSERT_TRUE(std::holds_alternative<Options>(ok));
  EXPECT_DOUBLE_EQ(std::get<Options>(ok).xcpi_receiver_chirp.bits_per_s(), 80e6);
  EXPECT_TRUE(std::get<Options>(ok).xcpi_receiver_cloud.is_zero());
  for (const char* bad : {"0", "99K", "200G", "x"}) {
    const auto r = parse({"-s", "--xcpi-receiver-chirp", bad});
    ASSERT_TRUE(std::holds_alternative<std::string>(r)) << bad;
    EXPECT_NE(std::get<std::string>(r).find("--xcpi-receiver-chirp"), std::string::npos) << bad;
  }
  const auto both = parse({"-s", "--xcpi-receiver-chirp", "80M", "--xcpi-receiver-cloud", "30M"});
  ASSERT_TRUE(std::holds_alternative<std::string>(both));
  EXPECT_NE(std::get<std::string>(both).find("mutually exclusive"), std::string::npos);
}

}  // namespace
}  // namespace xcphost

namespace xcphost {
namespace {

// The XCP-i block takes 8 bytes of the shim: a full data packet must still be
// 1500 bytes on the wire, or the kernel refuses it (EMSGSIZE) and the flow stalls.
TEST(Options, XcpiBlockShrinksThePayloadSoPacketsFitTheMtu) {
  const auto plain = parse({"-c", "10.0.0.2", "--cc", "xcp"});
  const auto xcpi = parse({"-c", "10.0.0.2", "--cc", "xcp", "--xcpi"});
  ASSERT_TRUE(std::holds_alternative<Options>(plain));
  ASSERT_TRUE(std::holds_alternative<Options>(xcpi));
  const ConnectionConfig a = connection_config(std::get<Options>(plain), 0x0A000001);
  const ConnectionConfig b = connection_config(std::get<Options>(xcpi), 0x0A000001);
  EXPECT_EQ(a.mss_bytes, 1424u);
  EXPECT_EQ(b.mss_bytes, 1416u);
  EXPECT_EQ(a.packet_bytes(), 1500u);
  EXPECT_EQ(b.packet_bytes(), 1500u);
  const auto fixed = parse({"-c", "10.0.0.2", "--cc", "xcp", "--xcpi", "--mss", "1000"});
  EXPECT_EQ(connection_config(std::get<Options>(fixed), 1).packet_bytes(), 1000u + 20 + 28 + 36);
}

// One server process for several flows on a host (seed 003's complex topology ran 64
// xcpperf processes on two cores): -p takes a list, bounded by the port filter's ranges.
TEST(Options, ServerListensOnAListOfPortsBounded) {
  const auto one = parse({"-s", "-p", "5203"});
  ASSERT_TRUE(std::holds_alternative<Options>(one));
  EXPECT_EQ(std::get<Options>(one).ports, (std::vector<uint16_t>{5203}));
  const auto def = parse({"-s"});
  ASSERT_TRUE(std::holds_alternative<Options>(def));
  EXPECT_EQ(std::get<Options>(def).ports, (std::vector<uint16_t>{5201}));
  const auto three = parse({"-s", "-p", "5205,5203,5212", "--one-off"});
  ASSERT_TRUE(std::holds_alternative<Options>(three));
  EXPECT_EQ(std::get<Options>(three).ports, (std::vector<uint16_t>{5205, 5203, 5212}));
  EXPECT_EQ(std::get<Options>(three).port, 5205);
  std::string list;
  for (int i = 0; i < 33; ++i) list += (i ? "," : "") + std::to_string(6000 + i);
  const auto too_many = parse({"-s", "-p", list});
  ASSERT_TRUE(std::holds_alternative<std::string>(too_many));
  EXPECT_NE(std::get<std::string>(too_many).find("at most 32 ports"), std::string::npos);
  const auto twice = parse({"-s", "-p", "5203,5203"});
  ASSERT_TRUE(std::holds_alternative<std::string>(twice));
  EXPECT_NE(std::get<std::string>(twice).find("5203 is listed twice"), std::string::npos);
  const auto bad = parse({"-s", "-p", "5203,"});
  ASSERT_TRUE(std::holds_alternative<std::string>(bad));
  EXPECT_NE(std::get<std::string>(bad).find("got '5203,'"), std::string::npos);
  const auto client = parse({"-c", "10.0.0.2", "-p", "5203,5204"});
  ASSERT_TRUE(std::holds_alternative<std::string>(client));
  EXPECT_NE(std::get<std::string>(client).find("for a server"), std::string::npos);
}

TEST(Options, XdpIsOptInAndNamesItsInterface) {
  EXPECT_FALSE(std::get<Options>(parse({"-c", "10.0.0.2"})).xdp);
  const auto xdp = std::get<Options>(parse({"-c", "10.0.0.2", "--xdp"}));
  EXPECT_TRUE(xdp.xdp);
  EXPECT_TRUE(xdp.xdp_dev.empty());
  const auto dev = std::get<Options>(parse({"-s", "--xdp-dev", "eth1"}));
  EXPECT_TRUE(dev.xdp);
  EXPECT_EQ(dev.xdp_dev, "eth1");
  const auto long_name = parse({"-s", "--xdp-dev", "a-name-of-16-chr"});
  ASSERT_TRUE(std::holds_alternative<std::string>(long_name));
  EXPECT_NE(std::get<std::string>(long_name).find("--xdp-dev"), std::string::npos);
  const auto duty = parse({"-s", "--xdp", "--xcpi-receiver-cloud", "10M"});
  ASSERT_TRUE(std::holds_alternative<std::string>(duty));
  EXPECT_NE(std::get<std::string>(duty).find("--xdp"), std::string::npos);
}
}  // namespace
}  // namespace xcphost
