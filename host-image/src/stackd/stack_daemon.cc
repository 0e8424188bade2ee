#include "stackd/stack_daemon.hh"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <random>

#include "app/host_stack.hh"
#include "socket/unix_channel.hh"
#include "xcp/header.hh"

namespace xcpstackd {
namespace {

using xcpsock::Reply;
using xcpsock::Request;

// Packet batches drained per iteration before timers and sending get their turn.
constexpr int kMaxRxBatchesPerIteration = 8;
// Upper bound on one sleep, so `stop` is checked often.
constexpr xcp::Duration kMaxSleep = xcp::Duration::milliseconds(50);
// Ephemeral ports (Linux's default ip_local_port_range).
constexpr uint16_t kPortLow = 32768;
constexpr uint16_t kPortHigh = 60999;
// Ended connections whose fate (reset, timed out) the daemon remembers.
constexpr size_t kMaxFates = 1024;
static_assert(xcphost::ConnectionConfig{}.mss_bytes == xcpsock::kMssBytes, "the interposer's TCP_MAXSEG");

int errno_of(xcphost::ConnError e) {
  switch (e) {
    case xcphost::ConnError::kReset: return ECONNREFUSED;
    case xcphost::ConnError::kConnectTimeout:
    case xcphost::ConnError::kTimedOut: return ETIMEDOUT;
    case xcphost::ConnError::kNone: break;
  }
  return ECONNABORTED;
}

void send_reply(int fd, const Reply& r) {
  xcpsock::send_message(fd, &r, sizeof r, -1, MSG_DONTWAIT);  // a vanished client is not our error
}

Reply error_reply(int err) {
  Reply r;
  r.err = err;
  return r;
}

// Protocol-253 raw sockets open in this network namespace: /proc/net/raw's
// local_address is ADDR:PROTOCOL in hex. -1 when it cannot be read.
int raw_sockets_of_protocol_253() {
  std::FILE* f = std::fopen("/proc/self/net/raw", "re");
  if (f == nullptr) return -1;
  int n = 0;
  char line[512];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned slot = 0, addr = 0, proto = 0;
    if (std::sscanf(line, " %u: %x:%x", &slot, &addr, &proto) == 3 && proto == xcp::kIpProtoXcp) ++n;
  }
  std::fclose(f);
  return n;
}

DaemonConfig with_buffers(DaemonConfig cfg) {
  cfg.defaults.send_buffer_bytes = cfg.max_send_buffer_bytes;
  cfg.defaults.receive_window_bytes = cfg.receive_buffer_bytes;
  return cfg;
}

}  // namespace

StackDaemon::StackDaemon(const DaemonConfig& cfg, const xcp::Clock& clock)
    : cfg_(with_buffers(cfg)),
      clock_(clock),
      sock_(cfg.raw),
      tx_(sock_),
      rx_(sock_),
      ep_(tx_),
      ctl_(static_cast<int>(xcp::check_syscall("listen on " + cfg.address,
                                               xcpsock::listen_unix(cfg.address.c_str())))),
      next_port_(static_cast<uint16_t>(kPortLow + std::random_device{}() % (kPortHigh - kPortLow))),
      report_(cfg.report_interval > xcp::Duration::zero() ? stdout : nullptr, cfg.report_interval, clock.now()) {
  if (cfg_.unowned_syn != UnownedSyn::kIgnore) ep_.set_reset_unowned_syn([this] { return may_refuse_syn(); });
}

bool StackDaemon::may_refuse_syn() {
  bool refuse = cfg_.unowned_syn == UnownedSyn::kReset;
  if (cfg_.unowned_syn == UnownedSyn::kAuto) {
    const xcp::Timestamp now = clock_.now();
    if (last_raw_check_ && now - *last_raw_check_ < xcp::Duration::milliseconds(10)) return false;
    last_raw_check_ = now;
    refuse = raw_sockets_of_protocol_253() == 1;  // ours alone
  }
  if (refuse) ++stats_.refused_syns;
  return refuse;
}

xcphost::ConnectionConfig StackDaemon::config_for(const Request& req) const {
  xcphost::ConnectionConfig c = cfg_.defaults;
  switch (req.cc) {
    case XCPSOCK_CC_XCP: c.cc = xcphost::CcKind::kXcp; break;
    case XCPSOCK_CC_NEWRENO: c.cc = xcphost::CcKind::kNewReno; break;
    case XCPSOCK_CC_HSTCP: c.cc = xcphost::CcKind::kHighSpeed; break;
    default: break;
  }
  if (req.rate_bps != 0) c.desired_rate = xcp::Rate::from_bits_per_s(static_cast<double>(req.rate_bps));
  return c;
}

uint16_t StackDaemon::ephemeral_port(uint32_t remote_addr) {
  (void)remote_addr;
  for (uint32_t tries = 0; tries <= kPortHigh - kPortLow; ++tries) {
    const uint16_t p = next_port_;
    next_port_ = next_port_ >= kPortHigh ? kPortLow : static_cast<uint16_t>(next_port_ + 1);
    if (!ep_.owns_port(p)) return p;
  }
  return 0;
}

void StackDaemon::accept_control() {
  for (;;) {
    const int fd = accept4(ctl_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN, or a client that went away
    pending_ctl_.emplace_back(fd);
  }
}

void StackDaemon::on_request(xcp::FileDescriptor ctl) {
  Request req;
  int fd = -1;
  const ssize_t n = xcpsock::recv_message(ctl.get(), &req, sizeof req, &fd, true, MSG_DONTWAIT);
  xcp::FileDescriptor passed = fd >= 0 ? xcp::FileDescriptor(fd) : xcp::FileDescriptor();
  ++stats_.requests;
  if (n != static_cast<ssize_t>(sizeof req) || req.magic != xcpsock::kMagic || req.version != xcpsock::kVersion) {
    ++stats_.bad_requests;
    send_reply(ctl.get(), error_reply(EPROTO));
    return;
  }
  switch (req.op) {
    case xcpsock::Op::kConnect:
      if (!passed.valid()) break;
      do_connect(std::move(ctl), req, std::move(passed));
      return;
    case xcpsock::Op::kListen: do_listen(std::move(ctl), req); return;
    case xcpsock::Op::kInfo: do_info(ctl.get(), req); return;
    case xcpsock::Op::kSetSndbuf: do_set_sndbuf(ctl.get(), req); return;
    case xcpsock::Op::kFate: do_fate(ctl.get(), req); return;
  }
  ++stats_.bad_requests;
  send_reply(ctl.get(), error_reply(EPROTO));
}

void StackDaemon::do_connect(xcp::FileDescriptor ctl, const Request& req, xcp::FileDescriptor app) {
  if (streams_.size() >= cfg_.max_connections) {
    ++stats_.refused_limit;
    send_reply(ctl.get(), error_reply(EAGAIN));
    return;
  }
  const uint16_t port = ephemeral_port(req.addr);
  if (port == 0) {
    send_reply(ctl.get(), error_reply(EADDRNOTAVAIL));
    return;
  }
  ++stats_.connects;
  Stream& s = streams_.emplace_back();
  s.app = make_app(std::move(app));
  s.app->set_sndbuf(req.sndbuf);
  s.app->set_discard(req.filler);
  s.reply_to = std::move(ctl);
  xcphost::ConnectionConfig cfg = config_for(req);
  s.cc = cfg.cc;
  if (cfg.xcpi_ip_ttl != 0) cfg.xcpi_sender_ipv4 = xcphost::local_address_towards(req.addr);
  xcphost::Connection& c = ep_.connect(xcphost::FlowKey{req.addr, port, req.port}, cfg, s.app.get(), clock_.now());
  s.active = &c;
  s.app->attach(c);
  if (req.filler > 0) {  // a non-blocking connect: our address now, the outcome later
    Reply r = error_reply(EINPROGRESS);
    r.local_addr = xcphost::local_address_towards(req.addr);
    r.local_port = port;
    r.remote_addr = req.addr;
    r.remote_port = req.port;
    send_reply(s.reply_to.get(), r);
  }
}

void StackDaemon::do_listen(xcp::FileDescriptor ctl, const Request& req) {
  if (listeners_.contains(req.port) || ep_.owns_port(req.port)) {
    send_reply(ctl.get(), error_reply(EADDRINUSE));
    return;
  }
  const xcphost::ConnectionConfig cfg = config_for(req);
  const uint16_t port = req.port;
  ep_.listen(port, cfg, [this, port](xcphost::Connection& c) { return on_syn(port, c); });
  Reply ok;
  ok.local_addr = req.addr;
  ok.local_port = port;
  send_reply(ctl.get(), ok);
  listeners_[port] =
      Listener{std::move(ctl), std::clamp<uint32_t>(req.backlog, 1, xcpsock::kMaxBacklog), 0, cfg.cc, req.sndbuf};
  report_.listening(port);
}

std::unique_ptr<AppStream> StackDaemon::make_app(xcp::FileDescriptor fd) const {
  return std::make_unique<AppStream>(std::move(fd), cfg_.max_backlog_bytes, cfg_.max_send_buffer_bytes);
}

StackDaemon::Stream* StackDaemon::find_stream(const Request& req) {
  const xcphost::FlowKey key{req.addr, req.local_port, req.port};
  for (Stream& s : streams_) {
    const xcphost::Connection* c = s.app->connection();
    if (c != nullptr && c->key() == key) return &s;
  }
  return nullptr;
}

void StackDaemon::do_info(int ctl, const Request& req) {
  const Stream* s = find_stream(req);
  if (s == nullptr) {
    send_reply(ctl, error_reply(ENOTCONN));
    return;
  }
  Reply r;
  r.info = connection_info(*s->app->connection());
  r.info.cc = xcpsock_cc_from_name(std::string(xcphost::to_string(s->cc)).c_str());
  send_reply(ctl, r);
}

void StackDaemon::do_fate(int ctl, const Request& req) {
  const xcphost::FlowKey key{req.addr, req.local_port, req.port};
  Reply r;  // err 0: unknown, live, or closed cleanly
  for (auto it = fates_.rbegin(); it != fates_.rend(); ++it) {
    if (it->first == key) {
      r.info.state = 3;
      r.err = it->second;
      break;
    }
  }
  send_reply(ctl, r);
}

void StackDaemon::do_set_sndbuf(int ctl, const Request& req) {
  Stream* s = find_stream(req);
  if (s == nullptr) {
    send_reply(ctl, error_reply(ENOTCONN));
    return;
  }
  s->app->set_sndbuf(req.sndbuf);
  send_reply(ctl, Reply{});
}

xcphost::ConnectionHandler* StackDaemon::on_syn(uint16_t port, xcphost::Connection& c) {
  int pair[2];
  Stream& s = streams_.emplace_back();
  if (streams_.size() > cfg_.max_connections || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    ++stats_.refused_limit;
    s.reject = true;
    s.app = make_app(xcp::FileDescriptor());
  } else {
    s.app = make_app(xcp::FileDescriptor(pair[1]));
    s.app_end = xcp::FileDescriptor(pair[0]);
  }
  s.listener_port = port;
  if (auto it = listeners_.find(port); it != listeners_.end()) {
    s.cc = it->second.cc;
    s.app->set_sndbuf(it->second.sndbuf);
  }
  s.app->attach(c);
  return s.app.get();
}

void StackDaemon::deliver(Stream& s) {
  auto it = listeners_.find(s.listener_port);
  if (it == listeners_.end()) {
    s.reject = true;  // the application stopped listening
    return;
  }
  Listener& l = it->second;
  const xcphost::Connection& c = *s.app->connection();
  Reply r;
  r.local_addr = xcphost::local_address_towards(c.key().remote_addr);
  r.local_port = c.key().local_port;
  r.remote_addr = c.key().remote_addr;
  r.remote_port = c.key().remote_port;
  if (xcpsock::send_message(l.chan.get(), &r, sizeof r, s.app_end.get(), MSG_DONTWAIT) ==
      static_cast<ssize_t>(sizeof r)) {
    s.app_end.close();
    ++stats_.accepts;
    return;
  }
  if (errno != EAGAIN && errno != EWOULDBLOCK) {
    s.reject = true;
  } else if (++l.queued > l.backlog) {
    ++stats_.refused_limit;
    s.reject = true;
  }
}

void StackDaemon::report_closed(const Stream& s, const xcphost::Connection* c) {
  if (!report_.enabled()) return;
  std::optional<ConnSnapshot> snap = s.app->final_state();
  if (c != nullptr) snap = snapshot_of(*c, s.cc);
  if (!snap) return;
  snap->cc = s.cc;
  snap->info.cc = xcpsock_cc_from_name(std::string(xcphost::to_string(s.cc)).c_str());
  report_.closed(*snap);
}

void StackDaemon::close_listener(uint16_t port) {
  ep_.unlisten(port);
  listeners_.erase(port);
}

void StackDaemon::step_streams(xcp::Timestamp now) {
  for (auto& [port, l] : listeners_) l.queued = 0;
  for (auto it = streams_.begin(); it != streams_.end();) {
    Stream& s = *it;
    AppStream& a = *s.app;
    xcphost::Connection* c = a.connection();
    if (c != nullptr && (s.reject || a.overflowed() || a.app_reset())) {
      if (a.overflowed()) {
        // Rare and fatal to the connection: say so where the operator looks.
        ++stats_.overflow_resets;
        std::fprintf(stderr, "xcp-stackd: reset connection (local port %u, peer port %u): the application left %zu bytes unread (--max-backlog-bytes)\n",
                     c->key().local_port, c->key().remote_port, cfg_.max_backlog_bytes);
      }
      c->abort(now, xcphost::ConnError::kReset);
      c = nullptr;
    }
    if (s.reply_to.valid() && (a.established() || c == nullptr)) {
      Reply r;
      if (c != nullptr) {
        r.local_addr = xcphost::local_address_towards(c->key().remote_addr);
        r.local_port = c->key().local_port;
        r.remote_addr = c->key().remote_addr;
        r.remote_port = c->key().remote_port;
      } else {
        r = error_reply(errno_of(s.active != nullptr ? s.active->error() : xcphost::ConnError::kNone));
        a.drop_filler_now();
      }
      send_reply(s.reply_to.get(), r);
      s.reply_to.close();
    }
    if (s.app_end.valid() && c != nullptr && a.established()) deliver(s);
    if (a.fd() >= 0) {
      const uint64_t held = a.backlog_bytes();
      a.flush_to_app();
      // The application took bytes: the reopened window may be owed to the peer now.
      if (c != nullptr && a.backlog_bytes() < held) c->pump(now);
    }
    const bool undelivered_and_gone = s.app_end.valid() && c == nullptr;
    if (a.finished() || undelivered_and_gone || a.fd() < 0) {
      if (c != nullptr) c->abort(now, xcphost::ConnError::kReset);
      report_closed(s, nullptr);  // after abort: the final state is recorded
      const xcphost::ConnError e = a.error();
      if (a.established() && (e == xcphost::ConnError::kReset || e == xcphost::ConnError::kTimedOut) &&
          a.final_state()) {
        if (fates_.size() >= kMaxFates) fates_.pop_front();
        fates_.emplace_back(a.final_state()->key, e == xcphost::ConnError::kReset ? ECONNRESET : ETIMEDOUT);
      }
      if (s.active != nullptr) ep_.remove(*s.active);
      it = streams_.erase(it);
      continue;
    }
    ++it;
  }
}

void StackDaemon::run_once(xcp::Duration max_sleep) {
  xcp::Timestamp now = clock_.now();
  size_t got = 0;
  const auto on_packet = [&](uint32_t src, std::span<const uint8_t> bytes) { ep_.on_packet(src, bytes, now); };
  for (int i = 0; i < kMaxRxBatchesPerIteration; ++i) {
    const size_t n = rx_.receive(on_packet);
    got += n;
    if (n == 0) break;
  }
  now = clock_.now();
  ep_.service(now);
  tx_.flush();
  step_streams(now);
  tx_.flush();
  if (report_.due(now)) {
    std::vector<ConnSnapshot> snaps;
    for (const Stream& s : streams_) {
      if (const xcphost::Connection* c = s.app->connection(); c != nullptr) snaps.push_back(snapshot_of(*c, s.cc));
    }
    report_.interval(now, snaps);
  }

  // Poll set: raw socket, control socket, requests not read yet, listeners, streams.
  std::vector<pollfd> fds;
  fds.push_back({sock_.fd(), static_cast<short>(POLLIN | (tx_.pending() ? POLLOUT : 0)), 0});
  fds.push_back({ctl_.get(), POLLIN, 0});
  const size_t npending = pending_ctl_.size();
  for (const auto& p : pending_ctl_) fds.push_back({p.get(), POLLIN, 0});
  std::vector<uint16_t> lports;
  for (const auto& [port, l] : listeners_) {
    fds.push_back({l.chan.get(), POLLIN, 0});
    lports.push_back(port);
  }
  for (const Stream& s : streams_) {
    if (s.app->fd() >= 0) fds.push_back({s.app->fd(), s.app->poll_events(), 0});
  }
  const xcp::Timestamp wake = ep_.next_deadline();
  const xcp::Duration sleep =
      got > 0 ? xcp::Duration::zero() : std::clamp(wake - clock_.now(), xcp::Duration::zero(), max_sleep);
  const timespec ts{static_cast<time_t>(sleep.ns() / 1'000'000'000), static_cast<long>(sleep.ns() % 1'000'000'000)};
  if (ppoll(fds.data(), fds.size(), &ts, nullptr) < 0) {
    if (errno == EINTR) return;
    throw xcp::SystemError("ppoll", errno);
  }
  // fds[] indexes: 0 raw, 1 control, 2.. the pending requests polled, then listeners.
  const size_t polled = npending;
  std::vector<xcp::FileDescriptor> still;
  for (size_t i = 0; i < polled; ++i) {
    if (fds[2 + i].revents != 0) {
      on_request(std::move(pending_ctl_[i]));  // a request (or a hang-up) arrived
    } else {
      still.push_back(std::move(pending_ctl_[i]));
    }
  }
  // A listener's channel never carries requests: readable means closed.
  for (size_t i = 0; i < lports.size(); ++i) {
    if (fds[2 + polled + i].revents != 0) close_listener(lports[i]);
  }
  pending_ctl_ = std::move(still);
  // New control connections last: they were not in this poll set.
  if (fds[1].revents != 0) accept_control();
}

void StackDaemon::run(const std::function<bool()>& stop) {
  while (!stop()) run_once(kMaxSleep);
}

}  // namespace xcpstackd
