// The raw socket's kernel port filter (io/raw_socket.hh) on loopback, with
// real sockets (root only): a filtered socket gets the segments to its ports
// whatever the shim's length and the IP header's, and every XCP-i control
// message, and nothing else; an unfiltered one gets everything. Packets are
// told apart by a per-test random sequence number, so other protocol-253
// traffic on the host's loopback cannot confuse the counts.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "io/raw_socket.hh"
#include "io/rx_batch.hh"
#include "transport/segment.hh"
#include "xcp/control_message.hh"
#include "xcp/header.hh"

namespace xcphost {
namespace {

TEST(ConsecutivePorts, OneRangeWhenNoWrap) {
  EXPECT_EQ(consecutive_ports(40000, 10, 32768), (std::vector<PortRange>{{40000, 40009}}));
  EXPECT_EQ(consecutive_ports(40000, 1, 0), (std::vector<PortRange>{{40000, 40000}}));
  EXPECT_TRUE(consecutive_ports(40000, 0, 0).empty());
}

TEST(ConsecutivePorts, WrapsToTheGivenPort) {
  EXPECT_EQ(consecutive_ports(65530, 10, 32768), (std::vector<PortRange>{{65530, 65535}, {32768, 32771}}));
  EXPECT_EQ(consecutive_ports(65535, 3, 0), (std::vector<PortRange>{{65535, 65535}, {0, 1}}));
  // More ports than the span: all of it (what ObjectPlayer::local_port cycles through).
  EXPECT_EQ(consecutive_ports(40000, 40000, 32768), (std::vector<PortRange>{{32768, 65535}}));
  // A first port below the wrap target wraps to itself.
  EXPECT_EQ(consecutive_ports(5000, 70000, 32768), (std::vector<PortRange>{{5000, 65535}}));
}

TEST(PortFilterProgram, RejectsBadRanges) {
  EXPECT_THROW(port_filter_program({}), std::invalid_argument);
  const std::vector<PortRange> inverted{{10, 9}};
  EXPECT_THROW(port_filter_program(inverted), std::invalid_argument);
  const std::vector<PortRange> too_many(kMaxFilterPortRanges + 1, PortRange{1, 2});
  EXPECT_THROW(port_filter_program(too_many), std::invalid_argument);
  const std::vector<PortRange> most(kMaxFilterPortRanges, PortRange{1, 2});
  const auto p = port_filter_program(most);
  EXPECT_LE(p.size(), 255u);  // every jump to the end fits its 8-bit offset
}

class RawSocketFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "raw sockets need root";
    seq0_ = std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
    seq0_ &= ~uint64_t{0xffff};
  }

  // A transport segment to `dst_port`, tagged with seq0_ + tag.
  std::vector<uint8_t> segment(uint16_t dst_port, uint16_t tag, uint8_t shim_flags = 0, uint8_t version_nibble = 4) {
    std::vector<uint8_t> b(200);
    xcp::XcpHeader h;
    h.next_protocol = kNextProtoTransport;
    h.format = xcp::Format::kStandard;
    h.flags = shim_flags;
    h.xcp_ttl = 64;
    const size_t n = xcp::write_header(h, b);
    if (version_nibble != 4) b[xcp::kOffsetVersionFormat] = static_cast<uint8_t>((version_nibble << 4) | 1);
    SegmentHeader s;
    s.src_port = 1;
    s.dst_port = dst_port;
    s.seq = seq0_ + tag;
    s.flags = seg_flags::kSyn;
    const size_t m = write_segment_header(s, std::span(b).subspan(n));
    b.resize(n + m + 64);  // some payload
    return b;
  }
  std::vector<uint8_t> control(uint16_t tag) {
    std::vector<uint8_t> b(xcp::kControlMessageLen);
    xcp::write_control(xcp::ControlMessage{xcp::ControlType::kRequest, static_cast<uint32_t>(seq0_ >> 16), tag, 0, 0},
                       b);
    return b;
  }
  static void send_to_loopback(const RawSocket& s, const std::vector<uint8_t>& b) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(sendto(s.fd(), b.data(), b.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof a),
              static_cast<ssize_t>(b.size()));
  }

  // Tags of this test's packets received within `wait` (until `expect` of them came).
  std::set<uint16_t> drain(const RawSocket& s, size_t expect, std::chrono::milliseconds wait) {
    RxBatch rx(s);
    std::set<uint16_t> tags;
    const auto end = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{s.fd(), POLLIN, 0};
      poll(&p, 1, 20);
      rx.receive([&](uint32_t, std::span<const uint8_t> shim) {
        if (auto m = xcp::parse_control(shim); m) {
          if (m->session == static_cast<uint32_t>(seq0_ >> 16)) tags.insert(static_cast<uint16_t>(0x8000 | m->seq));
          return;
        }
        const auto h = xcp::parse_header(shim);
        size_t off = xcp::kHeaderBaseLen;
        if (h.ok()) off = h.header.length();
        const auto seg = parse_segment_header(shim.subspan(std::min(off, shim.size())));
        if (seg && (seg->seq & ~uint64_t{0xffff}) == seq0_) tags.insert(static_cast<uint16_t>(seg->seq & 0xffff));
      });
      if (tags.size() >= expect) break;
    }
    return tags;
  }

  uint64_t seq0_ = 0;
};

TEST_F(RawSocketFilterTest, DeliversOnlyOwnPortsAndControlMessages) {
  RawSocketConfig cfg;
  cfg.buffer_bytes = 1 << 20;
  RawSocket mine(cfg);
  RawSocket other(cfg);
  RawSocket all(cfg);
  RawSocket sender(cfg);
  const std::vector<PortRange> mine_ports{{45000, 45001}, {50010, 50010}};
  mine.set_port_filter(mine_ports);
  const PortRange other_port{46000, 46000};
  other.set_port_filter(std::span(&other_port, 1));
  const PortRange nobody{1, 1};
  sender.set_port_filter(std::span(&nobody, 1));
  EXPECT_TRUE(mine.filtered());
  EXPECT_FALSE(all.filtered());

  send_to_loopback(sender, segment(45000, 1));                                          // mine, base shim
  send_to_loopback(sender, segment(45001, 2, xcp::flags::kXcpi | xcp::flags::kIxcp));  // mine, 36-byte shim
  send_to_loopback(sender, segment(50010, 3, xcp::flags::kXcpi));                      // mine, 28-byte shim
  send_to_loopback(sender, segment(46000, 4));                                          // other's
  send_to_loopback(sender, segment(45002, 5));                                          // just past my range
  send_to_loopback(sender, segment(44999, 6, xcp::flags::kIxcp));                      // just before it
  send_to_loopback(sender, segment(45000, 7, 0, /*version=*/3));                        // not XCP v4
  send_to_loopback(sender, control(9));                                                 // XCP-i control
  // The same destination port 46000 with a shim whose hdr_len (28) puts the
  // segment elsewhere: the filter reads the port where the shim says.
  send_to_loopback(sender, segment(46000, 10, xcp::flags::kXcpi));

  const std::set<uint16_t> want_mine{1, 2, 3, 0x8000 | 9};
  const std::set<uint16_t> want_other{4, 10, 0x8000 | 9};
  const std::set<uint16_t> want_all{1, 2, 3, 4, 5, 6, 7, 0x8000 | 9, 10};
  EXPECT_EQ(drain(all, want_all.size(), std::chrono::milliseconds(2000)), want_all);
  // All sent before `all` was drained: whatever the filtered sockets hold has arrived.
  EXPECT_EQ(drain(mine, want_mine.size() + 1, std::chrono::milliseconds(200)), want_mine);
  EXPECT_EQ(drain(other, want_other.size() + 1, std::chrono::milliseconds(200)), want_other);
  EXPECT_EQ(drain(sender, 1, std::chrono::milliseconds(100)), std::set<uint16_t>{0x8000 | 9});
}

TEST_F(RawSocketFilterTest, IpOptionsMoveTheShimAndTheFilterFollows) {
  RawSocketConfig cfg;
  cfg.buffer_bytes = 1 << 20;
  RawSocket mine(cfg);
  RawSocket sender(cfg);
  const PortRange p{45100, 45100};
  mine.set_port_filter(std::span(&p, 1));
  const PortRange nobody{1, 1};
  sender.set_port_filter(std::span(&nobody, 1));
  // Four option bytes (NOP NOP NOP EOL): IHL = 6, the shim starts at 24.
  const uint8_t opts[4] = {1, 1, 1, 0};
  ASSERT_EQ(setsockopt(sender.fd(), IPPROTO_IP, IP_OPTIONS, opts, sizeof opts), 0);
  send_to_loopback(sender, segment(45100, 1));
  send_to_loopback(sender, segment(45101, 2));
  EXPECT_EQ(drain(mine, 2, std::chrono::milliseconds(500)), std::set<uint16_t>{1});
}

TEST_F(RawSocketFilterTest, AttachingDiscardsWhatCameBeforeTheFilter) {
  RawSocketConfig cfg;
  cfg.buffer_bytes = 1 << 20;
  RawSocket late(cfg);
  RawSocket sender(cfg);
  const PortRange nobody{1, 1};
  sender.set_port_filter(std::span(&nobody, 1));
  send_to_loopback(sender, segment(45300, 1));  // another process's, queued unfiltered
  RawSocket all(cfg);
  send_to_loopback(sender, segment(45300, 2));
  ASSERT_EQ(drain(all, 1, std::chrono::milliseconds(1000)), std::set<uint16_t>{2});  // loopback delivered
  const PortRange p{45301, 45301};
  late.set_port_filter(std::span(&p, 1));
  EXPECT_GE(late.discarded_before_filter(), 2u);
  send_to_loopback(sender, segment(45301, 3));
  EXPECT_EQ(drain(late, 2, std::chrono::milliseconds(300)), std::set<uint16_t>{3});
}

TEST_F(RawSocketFilterTest, KernelDropsCountAFullReceiveBuffer) {
  RawSocketConfig small;
  small.buffer_bytes = 4096;  // the kernel's minimum-ish: a few packets
  RawSocket slow(small);
  RawSocketConfig cfg;
  cfg.buffer_bytes = 1 << 20;
  RawSocket sender(cfg);
  const PortRange p{45200, 45200};
  slow.set_port_filter(std::span(&p, 1));
  const PortRange nobody{1, 1};
  sender.set_port_filter(std::span(&nobody, 1));
  ASSERT_EQ(slow.kernel_drops(), std::optional<uint64_t>(0));
  for (uint16_t i = 0; i < 50; ++i) send_to_loopback(sender, segment(45200, i));
  // Filtered-out packets are not drops: 50 packets to another port change nothing.
  RawSocket quiet(small);
  quiet.set_port_filter(std::span(&nobody, 1));
  const auto drops = slow.kernel_drops();
  ASSERT_TRUE(drops.has_value());
  EXPECT_GT(*drops, 0u);
  EXPECT_LT(*drops, 50u);
  for (uint16_t i = 0; i < 50; ++i) send_to_loopback(sender, segment(45200, i));
  EXPECT_EQ(quiet.kernel_drops(), std::optional<uint64_t>(0));
}

}  // namespace
}  // namespace xcphost
