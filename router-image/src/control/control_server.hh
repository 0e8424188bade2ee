// A unix stream socket speaking JSON lines (router-image/CONTROL.md), served
// from the engine's event loop: non-blocking accept/read/write, one response
// line per request line. The request handler is injected, so the framing is
// independent of what the commands do.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "xcp/event_loop.hh"
#include "xcp/fd.hh"

namespace xcprouter {

class ControlServer {
 public:
  using Handler = std::function<std::string(const std::string& request_line)>;
  static constexpr size_t kMaxLine = 64 * 1024;
  static constexpr size_t kMaxPendingOutput = 4 * 1024 * 1024;

  // Replaces a stale socket file at `path`. The socket exists (and accepts)
  // when the constructor returns.
  ControlServer(xcp::EventLoop& loop, std::string path, Handler handler);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Retries output a slow client could not take yet (called every loop turn).
  void flush_pending();
  size_t clients() const { return clients_.size(); }

 private:
  struct Client {
    xcp::FileDescriptor fd;
    std::string in, out;
  };
  void on_accept();
  void on_readable(int fd);
  void write_some(Client& c);
  void drop_client(int fd);

  xcp::EventLoop& loop_;
  std::string path_;
  Handler handler_;
  xcp::FileDescriptor listener_;
  std::map<int, Client> clients_;
};

}  // namespace xcprouter
