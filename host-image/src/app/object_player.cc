#include "app/object_player.hh"

#include <algorithm>

#include "app/session_protocol.hh"

namespace xcphost {
namespace {

// An object's send buffer holds the whole object when it can (its window
// never waits on the application) but no more: xcpperf's 16 MiB default per
// connection, times max_concurrent, would size memory by the concurrency
// bound instead of by the objects.
constexpr size_t kMinObjectSendBuffer = 64 * 1024;

uint64_t payload_acked(const Connection& c) {
  const uint64_t acked = c.stats().bytes_acked;
  return acked > kPreambleBytes ? acked - kPreambleBytes : 0;
}

void add(ObjectTotals& t, const Connection& c) {
  const ConnectionStats& s = c.stats();
  t.bytes_acked += payload_acked(c);
  t.retransmits += s.retransmits;
  t.timeouts += s.timeouts;
  t.fast_recoveries += s.fast_recoveries;
  t.feedback_bytes += s.feedback_bytes;
}

}  // namespace

const char* to_string(ObjectStatus s) {
  switch (s) {
    case ObjectStatus::kPending: return "pending";
    case ObjectStatus::kRunning: return "running";
    case ObjectStatus::kComplete: return "complete";
    case ObjectStatus::kFailed: return "failed";
    case ObjectStatus::kIncomplete: return "incomplete";
    case ObjectStatus::kNotStarted: return "not_started";
  }
  return "?";
}

uint16_t ObjectPlayer::local_port(uint16_t first, size_t i) {
  // Within [lo, 65535], lo = min(first, 32768): at least 32768 distinct ports,
  // more than kMaxObjects, so no two objects of one process share a port.
  const uint32_t lo = std::min<uint32_t>(first, 32768);
  const uint32_t span = 65536 - lo;
  return static_cast<uint16_t>(lo + (first - lo + i) % span);
}

ObjectPlayer::ObjectPlayer(Endpoint& ep, Config cfg, xcp::Timestamp t0)
    : ep_(ep), cfg_(std::move(cfg)), t0_(t0) {
  results_.reserve(cfg_.objects.size());
  for (const auto& o : cfg_.objects) {
    ObjectResult r;
    r.spec = o;
    results_.push_back(r);
  }
  cfg_.max_concurrent = std::max<uint32_t>(cfg_.max_concurrent, 1);
}

ObjectPlayer::~ObjectPlayer() {
  for (auto& r : running_) ep_.remove(*r.conn);
}

std::vector<size_t> ObjectPlayer::step(xcp::Timestamp now) {
  std::vector<size_t> out;
  for (auto it = running_.begin(); it != running_.end();) {
    ObjectResult& r = results_[it->index];
    if (!r.fct && payload_acked(*it->conn) >= r.spec.bytes) r.fct = now - (t0_ + *r.started);
    if (it->conn->done()) {
      conclude(*it, out);
      it = running_.erase(it);
    } else {
      ++it;
    }
  }
  while (!stopped_ && next_ < results_.size() && t0_ + results_[next_].spec.start <= now) {
    if (running_.size() >= cfg_.max_concurrent) {
      // Every object already due waits for a slot; mark each once.
      for (size_t j = std::max(next_, waited_upto_);
           j < results_.size() && t0_ + results_[j].spec.start <= now; ++j) {
        results_[j].waited = true;
        ++waited_;
        waited_upto_ = j + 1;
      }
      break;
    }
    ObjectResult& r = results_[next_];
    ConnectionConfig cc = cfg_.conn;
    cc.send_buffer_bytes =
        std::min(cc.send_buffer_bytes, std::max(kMinObjectSendBuffer, static_cast<size_t>(kPreambleBytes + r.spec.bytes)));
    auto app = std::make_unique<ClientStream>(cfg_.verify, r.spec.bytes);
    const FlowKey key{cfg_.remote_addr, local_port(cfg_.first_local_port, next_), cfg_.remote_port};
    Connection& c = ep_.connect(key, cc, app.get(), now);
    r.started = now - t0_;
    r.status = ObjectStatus::kRunning;
    running_.push_back(Running{next_, std::move(app), &c});
    max_active_ = std::max<uint32_t>(max_active_, static_cast<uint32_t>(running_.size()));
    ++next_;
  }
  return out;
}

xcp::Timestamp ObjectPlayer::next_wake() const {
  if (stopped_ || next_ >= results_.size() || running_.size() >= cfg_.max_concurrent) {
    return xcp::Timestamp::max();
  }
  return t0_ + results_[next_].spec.start;
}

void ObjectPlayer::finish(size_t index, ObjectStatus s, std::string error, std::vector<size_t>& out) {
  results_[index].status = s;
  results_[index].error = std::move(error);
  ++concluded_;
  out.push_back(index);
}

void ObjectPlayer::conclude(Running& run, std::vector<size_t>& out) {
  ObjectResult& r = results_[run.index];
  const Connection& c = *run.conn;
  r.retransmits = c.stats().retransmits;
  r.timeouts = c.stats().timeouts;
  add(done_totals_, c);
  const auto report = run.app->report();
  if (report) r.bytes_received = report->bytes_received > kPreambleBytes ? report->bytes_received - kPreambleBytes : 0;
  ObjectStatus s = ObjectStatus::kFailed;
  std::string why;
  if (c.state() == ConnState::kFailed) {
    r.conn_error = c.error();
    why = std::string(to_string(c.error())) + (r.fct ? " after the last byte was acknowledged" : "");
  } else if (!report) {
    why = "the server sent no valid end-of-stream report";
  } else if (r.bytes_received != r.spec.bytes) {
    r.altered = true;
    why = "the server received " + std::to_string(r.bytes_received) + " of " + std::to_string(r.spec.bytes) +
          " bytes";
  } else if (report->verify == VerifyStatus::kMismatch) {
    r.altered = true;
    why = "--verify: payload mismatch at offset " + std::to_string(report->first_mismatch_offset);
  } else if (!r.fct) {
    why = "closed before its last byte was acknowledged";
  } else {
    s = ObjectStatus::kComplete;
  }
  ep_.remove(c);
  finish(run.index, s, std::move(why), out);
}

std::vector<size_t> ObjectPlayer::stop(xcp::Timestamp now) {
  std::vector<size_t> out;
  if (stopped_) return out;
  stopped_ = true;
  for (; next_ < results_.size(); ++next_) finish(next_, ObjectStatus::kNotStarted, "", out);
  for (auto it = running_.begin(); it != running_.end();) {
    if (results_[it->index].fct) {
      ++it;
      continue;
    }
    ObjectResult& r = results_[it->index];
    r.retransmits = it->conn->stats().retransmits;
    r.timeouts = it->conn->stats().timeouts;
    add(done_totals_, *it->conn);
    it->conn->abort(now, ConnError::kReset);
    ep_.remove(*it->conn);
    finish(it->index, ObjectStatus::kIncomplete, "the test ended before its last byte was acknowledged", out);
    it = running_.erase(it);
  }
  return out;
}

std::vector<size_t> ObjectPlayer::give_up(const std::string& why) {
  std::vector<size_t> out;
  for (auto& run : running_) {
    ObjectResult& r = results_[run.index];
    r.retransmits = run.conn->stats().retransmits;
    r.timeouts = run.conn->stats().timeouts;
    add(done_totals_, *run.conn);
    ep_.remove(*run.conn);
    finish(run.index, ObjectStatus::kFailed, why, out);
  }
  running_.clear();
  return out;
}

ObjectTotals ObjectPlayer::totals() const {
  ObjectTotals t = done_totals_;
  for (const auto& r : running_) add(t, *r.conn);
  return t;
}

}  // namespace xcphost
