// xcpperf client: opens -P streams to the server, sends for -t seconds or
// -n bytes, reports every -i seconds and at the end. Returns an exit code.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "app/client_stream.hh"
#include "app/options.hh"
#include "app/report.hh"
#include "app/stream_sample.hh"
#include "xcp/clock.hh"

namespace xcphost {

struct HostStack;

int run_client(const Options& o);

// The -P local ports of a client process (--cport, else random in Linux's ephemeral range).
std::vector<uint16_t> client_local_ports(const Options& o, xcp::Timestamp now);

// One bulk (-t / -n) client test on a HostStack it shares: run_client's, or one
// --job of several in one process (objects_client.hh). Connects its streams on
// construction; step() runs it (handshakes, the test, closing) and returns false
// once it has ended and written its end report; rc() is then its exit code.
class BulkClient {
 public:
  struct Stream {
    std::unique_ptr<ClientStream> app;
    Connection* conn;
    StreamSampler sampler;
  };
  // `local_ports`: one per stream (o.parallel); the caller accepted them on the socket.
  BulkClient(const Options& o, HostStack& hs, Reporter& rep, const std::vector<uint16_t>& local_ports);
  bool step(xcp::Timestamp now, bool interrupted);
  xcp::Timestamp next_wake() const;
  int rc() const { return rc_; }

 private:
  enum class Phase { kConnecting, kTest, kDone };
  bool connecting_step(bool interrupted);
  void sample_all(double end_s);
  int end_report();
  const Options& o_;
  HostStack& hs_;
  Reporter& rep_;
  std::vector<Stream> streams_;
  Phase phase_ = Phase::kConnecting;
  int rc_ = kExitOk;
  bool interrupted_ = false;
  bool closing_ = false;
  xcp::Timestamp t0_, test_end_ = xcp::Timestamp::max(), next_tick_ = xcp::Timestamp::max(),
                      close_deadline_ = xcp::Timestamp::max();
  double last_tick_s_ = 0;
  double data_end_s_ = 0;  // when the last stream's data was fully acknowledged
};

}  // namespace xcphost
