// xcp-stackd end to end on loopback: the daemon (its own thread, a raw
// protocol-253 socket, so root only) serves both ends through the C API.
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "socket/xcpsock.h"
#include "stackd/stack_daemon.hh"

namespace xcpstackd {
namespace {

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// Bytes whose value depends on their offset, so any reordering or loss shows.
std::vector<uint8_t> pattern(size_t n, uint8_t salt) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 131 + i / 4096 + salt) & 0xff);
  return v;
}

bool write_all(int fd, const std::vector<uint8_t>& d) {
  size_t off = 0;
  while (off < d.size()) {
    const ssize_t n = write(fd, d.data() + off, d.size() - off);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

std::vector<uint8_t> read_to_eof(int fd) {
  std::vector<uint8_t> out;
  std::vector<uint8_t> buf(65536);
  for (;;) {
    const ssize_t n = read(fd, buf.data(), buf.size());
    if (n <= 0) return out;
    out.insert(out.end(), buf.begin(), buf.begin() + n);
  }
}

class StackdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "xcp-stackd needs a raw socket (root)";
    DaemonConfig cfg;
    cfg.address = addr_;
    cfg.defaults.cc = xcphost::CcKind::kXcp;
    cfg.defaults.connect_timeout = xcp::Duration::milliseconds(300);
    // Loopback in the machine's namespace: other stacks may own ports here.
    cfg.unowned_syn = UnownedSyn::kIgnore;
    configure(cfg);
    daemon_ = std::make_unique<StackDaemon>(cfg, clock_);
    thread_ = std::thread([this] { daemon_->run([this] { return stop_.load(); }); });
  }
  void TearDown() override {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  const char* addr() const { return addr_.c_str(); }
  virtual void configure(DaemonConfig&) {}

  std::string addr_ = "@xcplab-stackd-test-" + std::to_string(getpid());
  xcp::MonotonicClock clock_;
  std::unique_ptr<StackDaemon> daemon_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST_F(StackdTest, BytesCrossBothWaysIntactAndHalfCloseReadsAsEof) {
  const sockaddr_in srv = loopback(47101);
  const int l = xcpsock_listen(addr(), &srv, nullptr, 4);
  ASSERT_GE(l, 0) << std::strerror(errno);
  const auto up = pattern(3 << 20, 1), down = pattern(1 << 20, 7);
  std::vector<uint8_t> got_up, got_down;
  std::thread server([&] {
    sockaddr_in peer{};
    const int s = xcpsock_accept(l, &peer, nullptr, SOCK_CLOEXEC);
    ASSERT_GE(s, 0) << std::strerror(errno);
    EXPECT_EQ(peer.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    got_up = read_to_eof(s);  // the client's shutdown(SHUT_WR) ends this
    EXPECT_TRUE(write_all(s, down));
    close(s);
  });
  xcpsock_options o;
  xcpsock_options_init(&o);
  o.cc = XCPSOCK_CC_NEWRENO;
  sockaddr_in local{};
  const int c = xcpsock_connect(addr(), &srv, &o, &local);
  ASSERT_GE(c, 0) << std::strerror(errno);
  EXPECT_GE(ntohs(local.sin_port), 32768);
  ASSERT_TRUE(write_all(c, up));
  ASSERT_EQ(shutdown(c, SHUT_WR), 0);
  got_down = read_to_eof(c);
  server.join();
  EXPECT_TRUE(got_up == up) << got_up.size() << " of " << up.size();
  EXPECT_TRUE(got_down == down) << got_down.size() << " of " << down.size();
  struct xcpsock_info info{};
  // The connection may still be finishing its FIN exchange; then it is gone.
  if (xcpsock_info(addr(), &local, &srv, &info) == 0) {
    EXPECT_EQ(info.cc, XCPSOCK_CC_NEWRENO);
    EXPECT_EQ(info.bytes_acked, up.size());
  }
  close(c);
  close(l);
}

TEST_F(StackdTest, InfoReportsTheLiveConnectionsControllerWindowAndRtt) {
  const sockaddr_in srv = loopback(47102);
  const int l = xcpsock_listen(addr(), &srv, nullptr, 4);
  ASSERT_GE(l, 0);
  sockaddr_in local{};
  const int c = xcpsock_connect(addr(), &srv, nullptr, &local);
  ASSERT_GE(c, 0);
  const int s = xcpsock_accept(l, nullptr, nullptr, 0);
  ASSERT_GE(s, 0);
  ASSERT_TRUE(write_all(c, pattern(256 << 10, 3)));
  std::vector<uint8_t> buf(256 << 10);
  size_t got = 0;
  while (got < buf.size()) {
    const ssize_t n = read(s, buf.data() + got, buf.size() - got);
    ASSERT_GT(n, 0);
    got += static_cast<size_t>(n);
  }
  struct xcpsock_info info{};
  for (int i = 0; i < 100 && (xcpsock_info(addr(), &local, &srv, &info) != 0 || info.bytes_acked < got); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(info.cc, XCPSOCK_CC_XCP);  // the daemon's default
  EXPECT_EQ(info.state, 1);
  EXPECT_EQ(info.bytes_acked, got);
  EXPECT_GT(info.cwnd_bytes, 0u);
  EXPECT_GT(info.srtt_us, 0u);
  EXPECT_LT(info.srtt_us, 100'000u);  // loopback
  close(c);
  close(s);
  close(l);
}

TEST_F(StackdTest, NonBlockingAcceptSaysEagainThenPollWakesForAConnection) {
  const sockaddr_in srv = loopback(47103);
  const int l = xcpsock_listen(addr(), &srv, nullptr, 4);
  ASSERT_GE(l, 0);
  ASSERT_EQ(fcntl(l, F_SETFL, O_NONBLOCK), 0);
  EXPECT_EQ(xcpsock_accept(l, nullptr, nullptr, 0), -1);
  EXPECT_EQ(errno, EAGAIN);
  const int c = xcpsock_connect(addr(), &srv, nullptr, nullptr);
  ASSERT_GE(c, 0);
  pollfd p{l, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 2000), 1);
  const int s = xcpsock_accept(l, nullptr, nullptr, SOCK_NONBLOCK);
  ASSERT_GE(s, 0) << std::strerror(errno);
  EXPECT_TRUE(fcntl(s, F_GETFL) & O_NONBLOCK);
  char b;
  EXPECT_EQ(read(s, &b, 1), -1);  // nothing sent yet
  EXPECT_EQ(errno, EAGAIN);
  close(c);
  close(s);
  close(l);
}

TEST_F(StackdTest, ErrorsAreErrnoValues) {
  const sockaddr_in srv = loopback(47104);
  const int l = xcpsock_listen(addr(), &srv, nullptr, 4);
  ASSERT_GE(l, 0);
  EXPECT_EQ(xcpsock_listen(addr(), &srv, nullptr, 4), -1);
  EXPECT_EQ(errno, EADDRINUSE);
  // Nobody listens on 47105: the SYN goes unanswered until connect_timeout.
  const sockaddr_in none = loopback(47105);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(xcpsock_connect(addr(), &none, nullptr, nullptr), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(250));
  EXPECT_EQ(xcpsock_connect("@xcplab-no-such-daemon", &srv, nullptr, nullptr), -1);
  EXPECT_EQ(errno, ECONNREFUSED);
  close(l);
  // The port is free again once the listener is closed.
  int again = -1;
  for (int i = 0; i < 100 && (again = xcpsock_listen(addr(), &srv, nullptr, 4)) < 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(again, 0) << std::strerror(errno);
  close(again);
}

// A program that closes a connection with bytes it never read resets it, as
// a kernel's TCP sends RST then; the other end reads EOF (a socketpair
// carries no reset) and the daemon says how its connection ended.
TEST_F(StackdTest, ClosingWithUnreadBytesResetsThePeerAndTheDaemonKnowsItsFate) {
  const sockaddr_in srv = loopback(47110);
  const int l = xcpsock_listen(addr(), &srv, nullptr, 4);
  ASSERT_GE(l, 0);
  sockaddr_in local{};
  const int c = xcpsock_connect(addr(), &srv, nullptr, &local);
  ASSERT_GE(c, 0);
  const int s = xcpsock_accept(l, nullptr, nullptr, 0);
  ASSERT_GE(s, 0);
  ASSERT_TRUE(write_all(c, pattern(64 << 10, 2)));
  pollfd p{s, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 2000), 1);  // bytes wait unread in the server's descriptor
  EXPECT_EQ(xcpsock_fate(addr(), &local, &srv), 0);  // alive
  close(s);
  char b;
  EXPECT_EQ(read(c, &b, 1), 0);  // the client's descriptor: EOF
  int fate = 0;
  for (int i = 0; i < 100 && (fate = xcpsock_fate(addr(), &local, &srv)) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(fate, ECONNRESET);
  close(c);
  close(l);
}

// A non-blocking connect: the descriptor comes back at once and stays
// unwritable while the handshake runs; writable once it succeeded, and the
// bytes written before (to keep it unwritable) never reach the peer.
TEST_F(StackdTest, NonBlockingConnectTurnsWritableWhenEstablishedAndOnlyTheApplicationsBytesArrive) {
  const sockaddr_in srv = loopback(47106);
  const int l = xcpsock_listen(addr(), &srv, nullptr, 4);
  ASSERT_GE(l, 0);
  int pending = -1;
  sockaddr_in early{};
  const int c = xcpsock_connect_start(addr(), &srv, nullptr, &pending, &early);
  ASSERT_GE(c, 0) << std::strerror(errno);
  EXPECT_EQ(early.sin_family, AF_INET);  // getsockname after EINPROGRESS has our port
  EXPECT_GE(ntohs(early.sin_port), 32768);
  pollfd p{c, POLLOUT, 0};
  ASSERT_EQ(poll(&p, 1, 2000), 1);
  EXPECT_TRUE(p.revents & POLLOUT);
  EXPECT_FALSE(p.revents & (POLLHUP | POLLERR));
  sockaddr_in local{};
  ASSERT_EQ(xcpsock_connect_result(pending, 1, &local), 0) << std::strerror(errno);
  EXPECT_EQ(local.sin_port, early.sin_port);
  close(pending);
  const int s = xcpsock_accept(l, nullptr, nullptr, 0);
  ASSERT_GE(s, 0);
  const auto up = pattern(300 << 10, 5);
  ASSERT_TRUE(write_all(c, up));
  ASSERT_EQ(shutdown(c, SHUT_WR), 0);
  EXPECT_TRUE(read_to_eof(s) == up);
  close(c);
  close(s);
  close(l);
}

TEST_F(StackdTest, NonBlockingConnectToNobodyStaysUnwritableThenFailsWithItsError) {
  const sockaddr_in none = loopback(47107);  // ignored SYNs: the 300 ms connect timeout decides
  int pending = -1;
  const int c = xcpsock_connect_start(addr(), &none, nullptr, &pending, nullptr);
  ASSERT_GE(c, 0) << std::strerror(errno);
  pollfd p{c, POLLOUT, 0};
  EXPECT_EQ(poll(&p, 1, 150), 0) << "writable while the handshake runs";
  EXPECT_EQ(xcpsock_connect_result(pending, 0, nullptr), -1);
  EXPECT_EQ(errno, EINPROGRESS);
  ASSERT_EQ(poll(&p, 1, 3000), 1);
  EXPECT_TRUE(p.revents & POLLOUT);
  EXPECT_EQ(xcpsock_connect_result(pending, 0, nullptr), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
  close(pending);
  close(c);
}

class StackdRefusingTest : public StackdTest {
 protected:
  void configure(DaemonConfig& cfg) override { cfg.unowned_syn = UnownedSyn::kReset; }
};

TEST_F(StackdRefusingTest, ConnectToAPortNobodyListensOnIsRefusedAtOnce) {
  const sockaddr_in none = loopback(47108);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(xcpsock_connect(addr(), &none, nullptr, nullptr), -1);
  EXPECT_EQ(errno, ECONNREFUSED);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(250));  // not the timeout
  EXPECT_GE(daemon_->stats().refused_syns, 1u);
}

// Flow control: the receiver's daemon advertises what is left of its
// 256 KiB receive buffer. While the reader sleeps the sender's connection
// stops (the window closes; zero-window probes keep asking), the writer
// blocks on the send limit, nothing is reset, and every byte arrives once
// the reader reads.
class StackdSlowReaderTest : public StackdTest {
 protected:
  static constexpr uint32_t kRcvBuf = 256 << 10;
  void configure(DaemonConfig& cfg) override {
    cfg.receive_buffer_bytes = kRcvBuf;
    cfg.max_send_buffer_bytes = 512 << 10;
  }
};

TEST_F(StackdSlowReaderTest, ASleepingReaderClosesTheWindowAndLosesNothing) {
  const sockaddr_in srv = loopback(47109);
  const int l = xcpsock_listen(addr(), &srv, nullptr, 4);
  ASSERT_GE(l, 0);
  sockaddr_in local{};
  const int c = xcpsock_connect(addr(), &srv, nullptr, &local);
  ASSERT_GE(c, 0);
  const int s = xcpsock_accept(l, nullptr, nullptr, 0);
  ASSERT_GE(s, 0);
  size_t pair_buf = 0;  // a socketpair end's kernel send buffer (net.core.wmem_default)
  std::ifstream("/proc/sys/net/core/wmem_default") >> pair_buf;
  ASSERT_GT(pair_buf, 0u);
  const auto data = pattern(24 << 20, 9);
  std::atomic<size_t> written{0};
  std::thread writer([&] {
    size_t off = 0;
    while (off < data.size()) {
      const ssize_t n = write(c, data.data() + off, std::min<size_t>(64 << 10, data.size() - off));
      if (n <= 0) break;
      off += static_cast<size_t>(n);
      written = off;
    }
    shutdown(c, SHUT_WR);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the reader sleeps
  struct xcpsock_info snd{};
  ASSERT_EQ(xcpsock_info(addr(), &local, &srv, &snd), 0);
  const size_t written_asleep = written;
  // The peer took at most its receive buffer (plus zero-window probes of a
  // byte each) and what its socketpair holds (its send buffer, plus the one
  // buffer the kernel allocates beyond it: at most half of it); the writer
  // got at most that, the sender's 512 KiB limit and its own socketpair's.
  EXPECT_LE(snd.bytes_sent, kRcvBuf + pair_buf * 3 / 2 + 64) << "sent while the reader slept";
  EXPECT_LE(written_asleep, snd.bytes_sent + (512 << 10) + pair_buf * 3 / 2);
  EXPECT_LT(written_asleep, data.size() / 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  struct xcpsock_info later{};
  ASSERT_EQ(xcpsock_info(addr(), &local, &srv, &later), 0);
  EXPECT_LE(later.bytes_sent, snd.bytes_sent + 64) << "the closed window held";
  const auto got = read_to_eof(s);
  writer.join();
  EXPECT_EQ(got.size(), data.size());
  EXPECT_TRUE(got == data);
  EXPECT_EQ(daemon_->stats().overflow_resets, 0u);
  std::printf("slow reader: sent %llu B (acked %llu) and the writer %zu B while the reader slept; "
              "%zu B intact after\n",
              static_cast<unsigned long long>(snd.bytes_sent), static_cast<unsigned long long>(snd.bytes_acked),
              written_asleep, got.size());
  close(c);
  close(s);
  close(l);
}

}  // namespace
}  // namespace xcpstackd
