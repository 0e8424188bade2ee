// TxBatch on a raw socket, over loopback with real sockets (root only): with
// RawSocketConfig::header_included it writes the IPv4 header itself (IP_HDRINCL,
// no checksum pass in the kernel's copy), and what arrives must be what the
// kernel writes without it: version 4, IHL 5, DF, protocol 253, the socket's
// TTL, the kernel's source address and total length, the bytes intact.
// Packets carry a random tag, so other protocol-253 traffic on the host's
// loopback cannot confuse the test.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <vector>

#include "io/raw_socket.hh"
#include "io/rx_batch.hh"
#include "io/tx_batch.hh"
#include "xcp/header.hh"

namespace xcphost {
namespace {

struct Seen {
  std::vector<uint8_t> ip;     // the IPv4 header as it arrived
  std::vector<uint8_t> bytes;  // from the shim on
};

// Sends packets of `lens` bytes (each starts with `tag`, then its index) from a
// socket built with `cfg` to 127.0.0.1 through one TxBatch; returns what a
// plain raw socket received of them, in order.
std::vector<Seen> send_and_receive(const RawSocketConfig& cfg, uint64_t tag, const std::vector<size_t>& lens,
                                   uint8_t* ttl_out) {
  RawSocketConfig rcfg;
  rcfg.buffer_bytes = 1 << 20;
  RawSocket rx_sock(rcfg);
  RawSocket tx_sock(cfg);
  *ttl_out = tx_sock.ttl();
  TxBatch tx(tx_sock, 2);  // three packets: one full batch sent at commit, one by flush()
  for (size_t i = 0; i < lens.size(); ++i) {
    std::span<uint8_t> out = tx.buffer();
    for (size_t k = 0; k < lens[i]; ++k) out[k] = static_cast<uint8_t>(k * 7 + i);
    std::memcpy(out.data(), &tag, sizeof tag);
    out[8] = static_cast<uint8_t>(i);
    tx.commit(INADDR_LOOPBACK, lens[i]);
  }
  EXPECT_TRUE(tx.flush());
  EXPECT_EQ(tx.stats().packets, lens.size());
  EXPECT_EQ(tx.stats().errors, 0u) << tx.stats().last_errno;
  std::vector<Seen> seen;
  RxBatch rx(rx_sock);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (seen.size() < lens.size() && std::chrono::steady_clock::now() < end) {
    pollfd p{rx_sock.fd(), POLLIN, 0};
    poll(&p, 1, 20);
    rx.receive_packets([&](const RxPacket& p) {
      if (p.shim.size() < 9 || std::memcmp(p.shim.data(), &tag, sizeof tag) != 0) return;
      const uint8_t* ip = p.shim.data() - p.ip_header_bytes;
      seen.push_back(Seen{{ip, ip + p.ip_header_bytes}, {p.shim.begin(), p.shim.end()}});
    });
  }
  return seen;
}

class TxBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "raw sockets need root";
    tag_ = std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
  }
  uint64_t tag_ = 0;
};

void expect_kernel_like(const std::vector<Seen>& seen, const std::vector<size_t>& lens, uint8_t ttl) {
  ASSERT_EQ(seen.size(), lens.size());
  for (size_t i = 0; i < seen.size(); ++i) {
    const auto& ip = seen[i].ip;
    ASSERT_EQ(ip.size(), 20u);
    EXPECT_EQ(ip[0], 0x45);
    EXPECT_EQ(ip[1], 0);                                         // TOS
    EXPECT_EQ((ip[2] << 8) | ip[3], static_cast<int>(20 + lens[i]));  // total length
    EXPECT_EQ(ip[6] & 0xe0, 0x40);                               // DF, never fragmented
    EXPECT_EQ(ip[8], ttl);
    EXPECT_EQ(ip[9], xcp::kIpProtoXcp);
    EXPECT_EQ(std::vector<uint8_t>(ip.begin() + 12, ip.begin() + 16), (std::vector<uint8_t>{127, 0, 0, 1}));
    ASSERT_EQ(seen[i].bytes.size(), lens[i]);
    EXPECT_EQ(seen[i].bytes[8], i);
    for (size_t k = 9; k < lens[i]; ++k) ASSERT_EQ(seen[i].bytes[k], static_cast<uint8_t>(k * 7 + i)) << k;
  }
}

TEST_F(TxBatchTest, HeaderIncludedPacketsArriveAsTheKernelWouldWriteThem) {
  const std::vector<size_t> lens{100, 1480, 57};
  RawSocketConfig cfg;
  cfg.header_included = true;
  cfg.ttl = 37;
  uint8_t ttl = 0;
  const auto seen = send_and_receive(cfg, tag_, lens, &ttl);
  EXPECT_EQ(ttl, 37);
  expect_kernel_like(seen, lens, 37);
  // Without a TTL of its own the socket writes the namespace's default.
  cfg.ttl = 0;
  const auto def = send_and_receive(cfg, tag_ + 1, lens, &ttl);
  EXPECT_GT(ttl, 0);
  expect_kernel_like(def, lens, ttl);
}

TEST_F(TxBatchTest, KernelWrittenHeaderMatches) {
  const std::vector<size_t> lens{100, 1480, 57};
  RawSocketConfig cfg;
  cfg.header_included = false;
  cfg.ttl = 37;
  uint8_t ttl = 0;
  expect_kernel_like(send_and_receive(cfg, tag_, lens, &ttl), lens, 37);
}

}  // namespace
}  // namespace xcphost
