#include "proxy/jsonrpc/client_message.hpp"

#include <string>
#include <vector>

#include "proxy/jsonrpc/content_hash.hpp"
#include "proxy/jsonrpc/json_reader.hpp"
#include "proxy/jsonrpc/lenient_json.hpp"
#include "proxy/jsonrpc/upstream_skim.hpp"
#include "tracker/unicode.hpp"

namespace fsguard {

namespace {

// Parses `text`, hashing params.arguments.content and leaving it out of the
// result, so a large write is never held twice.
nlohmann::json parse_without_content(std::string_view text, std::optional<ContentHash>& content_hash)
{
  content_hash.reset();
  constexpr std::size_t k_small = 64 * 1024;
  if (text.size() < k_small) {
    // Small lines: a plain parse is faster than one with a callback.
    auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    auto& arguments = parsed.is_object() && parsed.contains("params")
                          && parsed["params"].is_object() && parsed["params"].contains("arguments")
                        ? parsed["params"]["arguments"]
                        : parsed;
    if (&arguments != &parsed && arguments.is_object()) {
      const auto content = arguments.find("content");
      if (content != arguments.end()) {
        if (content->is_string()) {
          content_hash = hash_bytes(content->get_ref<const std::string&>());
        }
        arguments.erase(content);
      }
    }
    return parsed;
  }
  std::vector<std::string> keys; // the key being read at each depth
  auto callback = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    const auto level = static_cast<std::size_t>(depth);
    if (event == nlohmann::json::parse_event_t::key) {
      // A key of an object at depth `level` (the outermost object is 1).
      keys.resize(level - 1);
      keys.push_back(parsed.get<std::string>());
      return true;
    }
    const bool is_content = level == 3 && keys.size() >= 3 && keys[0] == "params"
                            && keys[1] == "arguments" && keys[2] == "content";
    if (event == nlohmann::json::parse_event_t::value && is_content) {
      // Last one wins, as in JSON.parse.
      content_hash = parsed.is_string() ? std::optional(hash_bytes(parsed.get_ref<const std::string&>()))
                                        : std::nullopt;
      return false; // frees the string
    }
    if (event == nlohmann::json::parse_event_t::object_end && level == 2 && keys.size() >= 2
        && keys[0] == "params" && keys[1] == "arguments" && parsed.is_object()) {
      parsed.erase("content"); // the slot its discarded value left
    }
    return true;
  };
  return nlohmann::json::parse(text, callback, /*allow_exceptions=*/false);
}

} // namespace

ClientMessage parse_client_message(std::string_view line)
{
  ClientMessage message;
  parse_client_message(line, message);
  return message;
}

void parse_client_message(std::string_view line, ClientMessage& message)
{
  message.kind = MessageKind::invalid;
  const bool read_fast = read_json_fast(line, message.body, message.content.hash,
                                        &message.content.text, &message.content.traits);
  if (!read_fast) {
    // What the fast reader built before it gave up goes first: the full
    // parser builds the whole tree again.
    release_tree(message.body);
    if (nesting_depth(line) > k_max_nesting) {
      message.kind = MessageKind::too_deep;
      return;
    }
    message.body = parse_without_content(line, message.content.hash);
  }
  if (message.body.is_discarded()) {
    // The upstream (Node) decodes its input with U+FFFD for invalid UTF-8,
    // and JSON.parse accepts lone surrogate escapes: fsguard judges the
    // message the upstream will actually see.
    std::string repaired(line);
    if (auto replaced = replace_invalid_utf8(repaired)) {
      repaired = std::move(*replaced);
    }
    if (auto replaced = replace_lone_surrogates(repaired)) {
      repaired = std::move(*replaced);
    }
    if (auto replaced = replace_infinite_numbers(repaired)) {
      repaired = std::move(*replaced);
    }
    message.body = parse_without_content(repaired, message.content.hash);
  }
  if (message.body.is_discarded()) {
    message.kind = MessageKind::invalid;
    return;
  }
  if (!read_fast && !json_parse_rejects(line).empty()) {
    message.kind = MessageKind::unreadable; // the fast reader reads what JSON.parse does
    return;
  }
  if (message.body.is_array()) {
    message.kind = MessageKind::batch;
    return;
  }
  if (!message.body.is_object()) {
    message.kind = MessageKind::other;
    return;
  }
  const nlohmann::json* id = nullptr;
  bool has_method = false;
  bool has_answer = false;
  for (const auto& [key, value] : message.body.get_ref<const nlohmann::json::object_t&>()) {
    const std::string_view name = key;
    if (name == "id") {
      id = &value;
    } else if (name == "method") {
      has_method = true;
    } else if (name == "result" || name == "error") {
      has_answer = true;
    }
  }
  const bool has_id = id != nullptr;
  if (has_method) {
    message.kind = has_id ? MessageKind::request : MessageKind::notification;
    if (has_id && !id->is_string() && !id->is_number()) {
      message.kind = MessageKind::bad_id;
    }
  } else if (has_id && has_answer) {
    message.kind = MessageKind::response;
  } else {
    message.kind = MessageKind::other;
  }
}

nlohmann::json shallow_id(std::string_view line)
{
  const SkimmedMessage skimmed = skim_message(line);
  if (skimmed.raw_id.empty() || nesting_depth(skimmed.raw_id) > 0) {
    return nullptr;
  }
  auto id = nlohmann::json::parse(skimmed.raw_id, nullptr, false);
  return id.is_string() || id.is_number() ? id : nlohmann::json();
}

namespace {

// Empties the arrays and objects inside `value`, innermost first, so that
// each is destroyed with no members left to move.
void empty_children(nlohmann::json& value)
{
  if (auto* object = value.get_ptr<nlohmann::json::object_t*>()) {
    for (auto& member : *object) {
      if (member.second.is_structured()) {
        empty_children(member.second);
      }
    }
    object->clear();
  } else if (auto* array = value.get_ptr<nlohmann::json::array_t*>()) {
    for (auto& element : *array) {
      if (element.is_structured()) {
        empty_children(element);
      }
    }
    array->clear();
  }
}

} // namespace

void release_tree(nlohmann::json& tree)
{
  empty_children(tree);
  tree = nullptr;
}

} // namespace fsguard
