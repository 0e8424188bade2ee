// Runs an Endpoint on a raw socket: drains received batches, fires timers,
// lets connections send, flushes the send batch, then sleeps in ppoll()
// until the next packet, timer or wake-up the caller asks for.
#pragma once

#include <functional>

#include "io/raw_socket.hh"
#include "io/rx_batch.hh"
#include "io/tx_batch.hh"
#include "transport/endpoint.hh"
#include "xcpi/receiver_xcpi.hh"
#include "xcp/clock.hh"

namespace xcphost {

class IoLoop {
 public:
  // `step(now)` runs once per iteration after the endpoint was serviced;
  // returning false ends run(). `next_wake()` is the caller's next deadline.
  struct Hooks {
    std::function<bool(xcp::Timestamp)> step;
    std::function<xcp::Timestamp()> next_wake;
  };

  IoLoop(const xcp::Clock& clock, const RawSocket& sock, Endpoint& ep, TxBatch& tx, RxBatch& rx)
      : clock_(clock), sock_(sock), ep_(ep), tx_(tx), rx_(rx) {}
  void run(const Hooks& hooks);
  // The XCP-i receiver duty (may be null): sees every packet before the
  // endpoint and runs its timers with the endpoint's.
  void set_receiver_xcpi(ReceiverXcpi* r) { xcpi_ = r; }

 private:
  const xcp::Clock& clock_;
  const RawSocket& sock_;
  Endpoint& ep_;
  TxBatch& tx_;
  RxBatch& rx_;
  ReceiverXcpi* xcpi_ = nullptr;
};

}  // namespace xcphost
