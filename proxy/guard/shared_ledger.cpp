#include "proxy/guard/shared_ledger.hpp"

namespace fsguard {

namespace {

constexpr std::size_t k_client_name_bytes = 64;

std::string shown_name(std::string_view name)
{
  std::string shown;
  for (const char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      continue;
    }
    shown += c;
  }
  if (shown.size() > k_client_name_bytes) {
    std::size_t cut = k_client_name_bytes;
    while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0) == 0x80) {
      --cut; // not inside a UTF-8 sequence
    }
    shown.resize(cut);
    shown += "...";
  }
  return shown.empty() ? std::string("a client without a name") : shown;
}

std::string ago(std::int64_t now_ns, std::int64_t at_ns)
{
  const std::int64_t seconds = (now_ns - at_ns) / 1'000'000'000;
  if (seconds < 1) {
    return "just now";
  }
  if (seconds < 120) {
    return std::to_string(seconds) + " s ago";
  }
  if (seconds < 120 * 60) {
    return std::to_string(seconds / 60) + " min ago";
  }
  return std::to_string(seconds / 3600) + " h ago";
}

} // namespace

std::string describe_other_write(const OtherWrite& write, std::int64_t now_ns)
{
  return "by another agent session (" + shown_name(write.client) + ", pid "
         + std::to_string(write.pid) + ") " + ago(now_ns, write.at_ns);
}

} // namespace fsguard
