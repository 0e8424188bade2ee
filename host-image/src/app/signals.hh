// SIGINT/SIGTERM end a test cleanly: the handler only sets a flag that the
// I/O loop polls (its ppoll() wakes with EINTR).
#pragma once

namespace xcphost {

void install_stop_signals();
bool stop_requested();

}  // namespace xcphost
