// When the upstream cannot be started at all: the client's first request
// is answered with why, so the client shows more than "connection closed".
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace fsguard {

// How long fsguard waits for the client's first request after the upstream
// could not be started: a client sends `initialize` as soon as it has
// started fsguard; nobody else should keep fsguard waiting.
inline constexpr std::chrono::milliseconds k_start_failure_wait{2000};

// The error text for the client when the upstream could not be started
// (`why`, as start_upstream() says it).
std::string start_failure_message(std::string_view why);

// Reads the client's lines on stdin for at most `wait` and answers the first
// request among them with a JSON-RPC error saying `message`. Does not wait
// when stdin is a terminal.
void answer_first_request(std::string_view message,
                          std::chrono::milliseconds wait = k_start_failure_wait);

} // namespace fsguard
