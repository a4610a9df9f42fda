#include "proxy/jsonrpc/upstream_message.hpp"

#include "proxy/jsonrpc/client_message.hpp"
#include "proxy/jsonrpc/lenient_json.hpp"

namespace fsguard {

void UpstreamMessage::begin(std::string_view line)
{
  clear();
  m_line = line;
}

void UpstreamMessage::decode_first_text(std::string_view id_from_ends, std::size_t max_bytes)
{
  if (!decode_sdk_answer_text(m_line, id_from_ends, m_first_text.emplace(), max_bytes)) {
    m_first_text.reset();
  }
}

bool UpstreamMessage::skim()
{
  m_skimmed = m_first_text ? skim_message(m_line, m_first_text->end) : skim_message(m_line);
  if (m_skimmed.is_json_object) {
    return true;
  }
  // Escaped or repeated keys: the id and method from a full parse, which
  // the guard then reads the answer from too.
  if (nesting_depth(m_line) > k_max_nesting) {
    return false;
  }
  const nlohmann::json& parsed = tree();
  if (parsed.is_discarded()) {
    return false;
  }
  SkimmedMessage message;
  message.is_json_object = parsed.is_object();
  if (parsed.is_object()) {
    if (parsed.contains("id")) {
      m_raw_id = parsed["id"].dump();
      message.raw_id = m_raw_id;
    }
    if (parsed.contains("method")) {
      message.has_method = true;
      m_raw_method = parsed["method"].dump();
      message.raw_method = m_raw_method;
    }
    message.has_result_or_error = parsed.contains("result") || parsed.contains("error");
  }
  m_skimmed = message;
  return true;
}

const nlohmann::json& UpstreamMessage::tree()
{
  if (!m_tree) {
    m_tree = nlohmann::json::parse(m_line, nullptr, false);
  }
  return *m_tree;
}

std::optional<std::string> UpstreamMessage::method() const
{
  auto method = nlohmann::json::parse(m_skimmed.raw_method, nullptr, false);
  if (!method.is_string()) {
    return std::nullopt;
  }
  return std::move(method.get_ref<std::string&>());
}

void UpstreamMessage::clear()
{
  m_line = {};
  m_skimmed = {};
  m_first_text.reset();
  if (m_tree) {
    release_tree(*m_tree);
    m_tree.reset();
  }
}

} // namespace fsguard
