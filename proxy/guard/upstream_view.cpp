#include "proxy/guard/upstream_view.hpp"

#include <algorithm>
#include <cerrno>
#include <limits>

#include <nlohmann/json.hpp>

#include "proxy/jsonrpc/content_hash.hpp"
#include "proxy/jsonrpc/message.hpp"
#include "proxy/jsonrpc/protocol_era.hpp"
#include "tracker/path.hpp"

namespace fsguard {

namespace {

// U+FFFD REPLACEMENT CHARACTER in UTF-8.
constexpr std::string_view k_replacement = "\xEF\xBF\xBD";

bool plain_text_read(const ToolSpec& spec)
{
  return spec.role == ToolRole::read && !spec.path_is_list && spec.view == ReadView::utf8_text
         && spec.whole_if_status.empty() && spec.fallback_path_argument.empty();
}

} // namespace

std::optional<VerifyTool> verify_tool(const ToolMap& tools)
{
  for (const std::string_view preferred : {"read_text_file", "read_file"}) {
    const auto found = tools.find(preferred);
    if (found != tools.end() && plain_text_read(found->second)) {
      return VerifyTool{found->first, found->second.path_argument};
    }
  }
  for (const auto& [name, spec] : tools) {
    if (plain_text_read(spec)) {
      return VerifyTool{name, spec.path_argument};
    }
  }
  return std::nullopt;
}

std::string verify_request(const std::string& id, const VerifyTool& tool, const std::string& path,
                           const nlohmann::json& envelope)
{
  const nlohmann::json message = {
    {"jsonrpc", "2.0"},
    {"id", id},
    {"method", "tools/call"},
    {"params", {{"name", tool.name}, {"arguments", {{tool.path_argument, path}}}}},
  };
  return own_request_line(message, envelope);
}

UpstreamRead read_outcome(UpstreamMessage& answer)
{
  const SkimmedMessage& skimmed = answer.skimmed();
  if (skim_tool_succeeded(skimmed) == true) {
    const auto raw = skim_first_text(skimmed);
    auto text = raw ? decoded_json_string(*raw, std::numeric_limits<std::size_t>::max())
                    : std::nullopt;
    if (text) {
      return UpstreamRead{UpstreamRead::Outcome::text, std::move(*text), {}};
    }
  }
  const nlohmann::json& response = answer.tree();
  UpstreamRead read;
  const auto& result = member(response, "result");
  if (!result.is_object()) {
    const auto& message = member(member(response, "error"), "message");
    read.reason = "the upstream answered fsguard's read with an error"
                  + (message.is_string() ? ": " + message.get<std::string>() : std::string());
    return read;
  }
  const auto& content = member(result, "content");
  const auto& text = content.is_array() && content.size() == 1 ? member(content.front(), "text")
                                                                : nlohmann::json();
  if (!text.is_string()) {
    read.reason = "the upstream's answer to fsguard's read held no text";
    return read;
  }
  const auto& said = text.get_ref<const std::string&>();
  const auto& is_error = member(result, "isError");
  if (is_error.is_boolean() && is_error.get<bool>()) {
    // server-filesystem gives Node's error ("ENOENT: no such file or
    // directory, open '…'"), or refuses a file whose directory is missing.
    // Only at the start: a path may itself hold such words.
    const std::string_view message = std::string_view(said).starts_with("Error: ")
                                        ? std::string_view(said).substr(7)
                                        : std::string_view(said);
    if (message.starts_with("ENOENT:") || message.starts_with("Parent directory does not exist")) {
      read.outcome = UpstreamRead::Outcome::missing;
    } else {
      read.reason = "the upstream could not read it for fsguard: " + said;
    }
    return read;
  }
  read.outcome = UpstreamRead::Outcome::text;
  read.text = said;
  return read;
}

ContentDigest shown_text_digest(std::string_view text)
{
  ContentDigest digest{hash_bytes(text), content_traits(text)};
  if (text.find(k_replacement) != std::string_view::npos) {
    digest.traits.valid_utf8 = false;
  }
  return digest;
}

void UpstreamView::asked(const std::string& file, std::string key, Clock::time_point now)
{
  m_known.erase(file);
  m_asked[file] = Asked{std::move(key), now};
}

std::optional<std::string> UpstreamView::answered(const std::string& key, UpstreamRead read)
{
  const auto found = std::find_if(m_asked.begin(), m_asked.end(),
                                  [&](const auto& entry) { return entry.second.key == key; });
  if (found == m_asked.end()) {
    return std::nullopt; // given up on, or replaced by a later read
  }
  std::string file = found->first;
  m_asked.erase(found);
  m_known[file] = std::move(read);
  return file;
}

void UpstreamView::drop_asks_at(const std::string& path)
{
  std::erase_if(m_asked, [&](const auto& entry) { return is_within(entry.first, path); });
  std::erase_if(m_known, [&](const auto& entry) { return is_within(entry.first, path); });
}

std::vector<std::string> UpstreamView::expire(Clock::time_point before)
{
  std::vector<std::string> expired;
  for (auto entry = m_asked.begin(); entry != m_asked.end();) {
    if (entry->second.at < before) {
      expired.push_back(entry->first);
      m_known[entry->first] = UpstreamRead{
        UpstreamRead::Outcome::failed, {},
        "the upstream did not answer fsguard's read of it within call_timeout_s"};
      entry = m_asked.erase(entry);
    } else {
      ++entry;
    }
  }
  return expired;
}

const UpstreamRead* UpstreamView::known(const std::string& path) const
{
  const auto found = m_known.find(path);
  return found == m_known.end() ? nullptr : &found->second;
}

DiskError UpstreamView::unknown(const std::string& path) const
{
  const UpstreamRead* read = known(path);
  return DiskError{EIO, read != nullptr ? read->reason
                                        : "fsguard had not asked the upstream for it (verify: "
                                          "upstream)"};
}

Result<FileStat, DiskError> UpstreamView::stat(const std::string& path)
{
  const UpstreamRead* read = known(path);
  if (read == nullptr || read->outcome == UpstreamRead::Outcome::failed) {
    return unknown(path);
  }
  if (read->outcome == UpstreamRead::Outcome::missing) {
    return DiskError{ENOENT};
  }
  FileStat stat;
  stat.size = static_cast<std::int64_t>(read->text.size());
  stat.mtime_ns = now_ns();
  stat.ctime_ns = ++m_stats;
  stat.mode = 0100644;
  return stat;
}

Result<ContentDigest, DiskError> UpstreamView::hash(const std::string& path)
{
  auto text = read(path);
  if (!text) {
    return text.error();
  }
  return shown_text_digest(*text);
}

Result<std::string, DiskError> UpstreamView::real_path(const std::string& path)
{
  return lexically_normal(path);
}

Result<std::string, DiskError> UpstreamView::read(const std::string& path)
{
  const UpstreamRead* read = known(path);
  if (read != nullptr && read->outcome == UpstreamRead::Outcome::missing) {
    return DiskError{ENOENT};
  }
  if (read == nullptr || read->outcome != UpstreamRead::Outcome::text) {
    return unknown(path);
  }
  return read->text;
}

Result<Fingerprint, DiskError> UpstreamView::fingerprint(const std::string& path)
{
  const std::int64_t taken_at = now_ns();
  auto stat = this->stat(path);
  if (!stat) {
    return stat.error();
  }
  auto digest = hash(path);
  if (!digest) {
    return digest.error();
  }
  return Fingerprint{*stat, digest->hash, taken_at, digest->traits};
}

ContentHash UpstreamView::hash_of(std::string_view bytes)
{
  return hash_bytes(bytes);
}

Result<std::vector<std::string>, DiskError> UpstreamView::list_directory(const std::string&)
{
  return DiskError{ENOTSUP};
}

} // namespace fsguard
