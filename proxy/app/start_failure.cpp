#include "proxy/app/start_failure.hpp"

#include <poll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <optional>

#include <nlohmann/json.hpp>

#include "proxy/jsonrpc/message.hpp"

namespace fsguard {

namespace {

// Writes all of `text` to stdout; gives up on an error (the client is gone).
void write_stdout(std::string_view text)
{
  while (!text.empty()) {
    const ssize_t wrote = ::write(STDOUT_FILENO, text.data(), text.size());
    if (wrote < 0 && errno == EINTR) {
      continue;
    }
    if (wrote <= 0) {
      return;
    }
    text.remove_prefix(static_cast<std::size_t>(wrote));
  }
}

// The id of `line` if it is a JSON-RPC request (it has a method and an id).
std::optional<nlohmann::json> request_id(std::string_view line)
{
  const auto message = nlohmann::json::parse(line, nullptr, false);
  if (!message.is_object() || !member(message, "method").is_string()) {
    return std::nullopt;
  }
  const auto& id = member(message, "id");
  if (!id.is_string() && !id.is_number()) {
    return std::nullopt;
  }
  return id;
}

} // namespace

std::string start_failure_message(std::string_view why)
{
  return "fsguard: " + std::string(why) + ". Check the server command in your MCP client's "
         "config (what follows fsguard and its options)";
}

void answer_first_request(std::string_view message, std::chrono::milliseconds wait)
{
  if (::isatty(STDIN_FILENO)) {
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + wait;
  std::string pending;
  std::array<char, 4096> buffer;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return;
    }
    pollfd input{STDIN_FILENO, POLLIN, 0};
    const int ready = ::poll(&input, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      return;
    }
    const ssize_t got = ::read(STDIN_FILENO, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      return; // the client hung up
    }
    pending.append(buffer.data(), static_cast<std::size_t>(got));
    for (auto newline = pending.find('\n'); newline != std::string::npos;
         newline = pending.find('\n')) {
      const auto id = request_id(std::string_view(pending).substr(0, newline));
      pending.erase(0, newline + 1);
      if (id) {
        write_stdout(error_response(*id, RpcError::server_error, message));
        return;
      }
    }
  }
}

} // namespace fsguard
