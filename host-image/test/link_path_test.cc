// The packet-socket path's header writing (io/link_path.hh) and where it
// refuses to apply. The path itself (frames through a packet socket, a
// gateway's MAC) is exercised end to end with --verify through a
// kernel-forwarding router in tests/host/test_kernel_router.py.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "io/link_path.hh"
#include "io/tx_batch.hh"
#include "xcp/header.hh"

namespace xcphost {
namespace {

TEST(LinkPath, HeadersAreTheFrameTheKernelWouldBuild) {
  LinkPath p;
  p.ifindex = 3;
  p.src_mac = {0x02, 0, 0, 0, 0, 0x01};
  p.dst_mac = {0x02, 0, 0, 0, 0, 0x02};
  p.src_addr = 0x0A4E0001;  // 10.78.0.1
  p.mtu = 1500;
  std::vector<uint8_t> frame(kLinkHeadroom + 1480, 0xAA);
  write_link_headers(p, 0x0A4E0002, 61, 1480, frame);
  EXPECT_EQ(std::vector<uint8_t>(frame.begin(), frame.begin() + 6), std::vector<uint8_t>(p.dst_mac.begin(), p.dst_mac.end()));
  EXPECT_EQ(std::vector<uint8_t>(frame.begin() + 6, frame.begin() + 12),
            std::vector<uint8_t>(p.src_mac.begin(), p.src_mac.end()));
  EXPECT_EQ(frame[12], 0x08);
  EXPECT_EQ(frame[13], 0x00);
  const uint8_t* ip = frame.data() + kEthHeaderBytes;
  EXPECT_EQ(ip[0], 0x45);
  EXPECT_EQ(ip[1], 0);                      // TOS
  EXPECT_EQ((ip[2] << 8) | ip[3], 1500);    // total length
  EXPECT_EQ((ip[4] << 8) | ip[5], 0);       // ID, as the kernel sends DF packets
  EXPECT_EQ((ip[6] << 8) | ip[7], 0x4000);  // DF, no fragment offset
  EXPECT_EQ(ip[8], 61);
  EXPECT_EQ(ip[9], xcp::kIpProtoXcp);
  EXPECT_EQ(ipv4_header_checksum({ip, kIpv4HeaderBytes}), 0);  // valid checksum
  EXPECT_EQ(ip[12], 10);
  EXPECT_EQ(ip[15], 1);
  EXPECT_EQ(ip[16], 10);
  EXPECT_EQ(ip[19], 2);
  EXPECT_EQ(frame[kLinkHeadroom], 0xAA);  // the payload is left alone
}

TEST(LinkPath, ChecksumMatchesAKnownHeader) {
  // RFC 1071 example header (Wikipedia's IPv4 checksum example): 0xB861.
  const std::array<uint8_t, 20> h = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                                     0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(ipv4_header_checksum(h), 0xB861);
}

TEST(LinkPath, LocalDestinationsStayOnTheIpLayer) {
  EXPECT_FALSE(resolve_link_path(INADDR_LOOPBACK).has_value());  // RTN_LOCAL, and lo is not Ethernet
}

TEST(LinkPath, LoopbackTrafficStillLeavesThroughTheRawSocket) {
  if (geteuid() != 0) GTEST_SKIP() << "raw and packet sockets need root";
  RawSocket sock{RawSocketConfig{}};
  TxBatch tx(sock, 4);
  ASSERT_TRUE(tx.enable_link_output(0, 1 << 20));
  auto out = tx.buffer();
  ASSERT_GE(out.size(), kMaxPacketBytes);
  xcp::XcpHeader shim;
  shim.format = xcp::Format::kMinimal;
  const size_t n = xcp::write_header(shim, out);
  tx.commit(INADDR_LOOPBACK, n);
  EXPECT_EQ(tx.pending_fd(), sock.fd());
  EXPECT_TRUE(tx.flush());
  EXPECT_EQ(tx.stats().packets, 1u);
  EXPECT_EQ(tx.stats().link_packets, 0u);
  EXPECT_EQ(tx.pending_fd(), -1);
}

}  // namespace
}  // namespace xcphost
