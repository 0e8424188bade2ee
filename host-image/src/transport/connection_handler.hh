// What a connection tells its application. Every method has a no-op default.
#pragma once

#include <cstdint>
#include <span>

namespace xcphost {

class Connection;

class ConnectionHandler {
 public:
  virtual ~ConnectionHandler() = default;
  virtual void on_established(Connection&) {}
  // In-order bytes; the span is valid only during the call.
  virtual void on_data(Connection&, std::span<const uint8_t>) {}
  // The peer sent FIN and every byte before it was delivered.
  virtual void on_peer_fin(Connection&) {}
  // Called before the connection sends: room in the send buffer to write().
  virtual void on_send_space(Connection&) {}
  // Terminal: closed cleanly or failed (see Connection::error()).
  virtual void on_closed(Connection&) {}
  // Bytes on_data() handed over that the application has not taken yet (a
  // socket stack holding them for a slow reader): they occupy the receive
  // window, so the advertised window shrinks and the sender waits (flow
  // control). Zero for a handler that consumes on_data() at once.
  virtual uint64_t unread_bytes() const { return 0; }
};

}  // namespace xcphost
