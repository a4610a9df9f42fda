// The upstream's life and death: relaying its stderr, waiting for its exit,
// stopping it in order, clearing its process group, and signals to fsguard.
#pragma once

#include <boost/asio/signal_set.hpp>

#include "proxy/session.hpp"

namespace fsguard {

// Closes the upstream's stdin, then escalates to SIGTERM and SIGKILL on its
// process group until it has exited.
awaitable<void> stop_upstream(Session& session);

// Copies the upstream's stderr to fsguard's stderr, keeping its tail.
awaitable<void> relay_upstream_stderr(Session& session);

// Waits for the upstream to exit, records its status and explains an
// unexpected exit.
awaitable<void> wait_for_upstream(Session& session);

// Once the upstream has exited: SIGTERM its process group, then SIGKILL
// whatever is left after the grace period.
awaitable<void> clear_upstream_group(Session& session);

// On SIGTERM, SIGINT or SIGHUP: stops reading the client and shuts the
// upstream down in order.
awaitable<void> handle_signals(Session& session, asio::signal_set& signals);

} // namespace fsguard
