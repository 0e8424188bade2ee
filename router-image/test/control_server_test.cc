#include "control/control_server.hh"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace xcprouter {
namespace {

std::string temp_socket_path() {
  return "/tmp/xcplab-ctl-test-" + std::to_string(getpid()) + ".sock";
}

int connect_to(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// Pumps the loop until `want` newline-terminated lines arrived on `fd`.
std::string read_lines(xcp::EventLoop& loop, int fd, int want) {
  std::string got;
  for (int spins = 0; spins < 1000 && std::count(got.begin(), got.end(), '\n') < want; ++spins) {
    loop.run_once(xcp::Duration::milliseconds(5));
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

TEST(ControlServer, OneResponseLinePerRequestLineInOrder) {
  xcp::MonotonicClock clock;
  xcp::EventLoop loop(clock);
  const std::string path = temp_socket_path();
  ControlServer server(loop, path, [](const std::string& line) { return "echo:" + line; });
  const int fd = connect_to(path);
  // Two requests in one write, a third split across writes.
  const std::string first = "a\nbb\ncc";
  ASSERT_EQ(::send(fd, first.data(), first.size(), 0), static_cast<ssize_t>(first.size()));
  EXPECT_EQ(read_lines(loop, fd, 2), "echo:a\necho:bb\n");
  ASSERT_EQ(::send(fd, "c\n", 2, 0), 2);
  EXPECT_EQ(read_lines(loop, fd, 1), "echo:ccc\n");
  EXPECT_EQ(server.clients(), 1u);
  ::close(fd);
  for (int i = 0; i < 10 && server.clients() > 0; ++i) loop.run_once(xcp::Duration::milliseconds(5));
  EXPECT_EQ(server.clients(), 0u);
}

TEST(ControlServer, OverlongLineDropsOnlyThatClient) {
  xcp::MonotonicClock clock;
  xcp::EventLoop loop(clock);
  const std::string path = temp_socket_path();
  ControlServer server(loop, path, [](const std::string&) { return std::string("ok"); });
  const int flood = connect_to(path);
  const int good = connect_to(path);
  const std::string junk(ControlServer::kMaxLine + 10, 'x');
  size_t sent = 0;
  while (sent < junk.size()) {
    const ssize_t n = ::send(flood, junk.data() + sent, junk.size() - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) sent += static_cast<size_t>(n);
    if (n < 0 && errno != EAGAIN) break;  // the server cut us off: expected
    loop.run_once(xcp::Duration::milliseconds(1));
  }
  for (int i = 0; i < 50 && server.clients() > 1; ++i) loop.run_once(xcp::Duration::milliseconds(5));
  EXPECT_EQ(server.clients(), 1u);
  ASSERT_EQ(::send(good, "ping\n", 5, 0), 5);
  EXPECT_EQ(read_lines(loop, good, 1), "ok\n");
  ::close(flood);
  ::close(good);
}

TEST(ControlServer, RemovesItsSocketFile) {
  xcp::MonotonicClock clock;
  xcp::EventLoop loop(clock);
  const std::string path = temp_socket_path();
  {
    ControlServer server(loop, path, [](const std::string&) { return std::string(); });
    EXPECT_EQ(::access(path.c_str(), F_OK), 0);
  }
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace xcprouter
