#include "proxy/jsonrpc/upstream_skim.hpp"

#include "proxy/jsonrpc/skimmer.hpp"

namespace fsguard {

SkimmedMessage skim_message(std::string_view line)
{
  return Skimmer(line).run();
}

SkimmedMessage skim_message(std::string_view line, const char* first_text_end)
{
  return Skimmer(line, first_text_end).run();
}

SkimmedMessage skim_message_generic(std::string_view line)
{
  return Skimmer(line).run_generic();
}

std::optional<bool> skim_tool_succeeded(const SkimmedMessage& response)
{
  if (!response.is_json_object) {
    return std::nullopt;
  }
  if (response.has_error || response.results != 1) {
    return response.results == 0 && response.has_error ? std::optional(false) : std::nullopt;
  }
  if (response.result.walked) {
    if (response.result.is_error_members > 1) {
      return std::nullopt;
    }
    return response.result.raw_is_error != "true";
  }
  std::string_view is_error;
  int flags = 0;
  if (!Skimmer(response.raw_result).walk([&](std::string_view key, std::string_view value) {
        if (key == "isError") {
          is_error = value;
          ++flags;
        }
      })) {
    return std::nullopt;
  }
  if (flags > 1) {
    return std::nullopt;
  }
  return is_error != "true";
}

std::optional<bool> skim_shows_content(const SkimmedMessage& response)
{
  if (!response.is_json_object || response.has_error || response.results != 1) {
    return std::nullopt;
  }
  std::string_view content = response.result.raw_content;
  int found = response.result.content_members;
  if (!response.result.walked
      && !Skimmer(response.raw_result).walk([&](std::string_view key, std::string_view value) {
           if (key == "content") {
             content = value;
             ++found;
           }
         })) {
    return std::nullopt;
  }
  if (found > 1) {
    return std::nullopt;
  }
  if (found == 0 || !content.starts_with('[')) {
    return false;
  }
  const auto next = content.find_first_not_of(" \t\r\n", 1);
  return next != std::string_view::npos && content[next] != ']';
}

std::optional<std::string_view> skim_member(std::string_view object, std::string_view key)
{
  std::string_view found;
  int count = 0;
  if (!Skimmer(object).walk([&](std::string_view name, std::string_view value) {
        if (name == key) {
          found = value;
          ++count;
        }
      })
      || count != 1) {
    return std::nullopt;
  }
  return found;
}


std::optional<std::string_view> skim_first_text(const SkimmedMessage& response)
{
  if (!response.is_json_object || response.has_error || response.results != 1) {
    return std::nullopt;
  }
  if (response.result.walked) {
    const auto& result = response.result;
    if (result.content_members != 1 || !result.first_block_walked || result.type_members != 1
        || result.raw_type != "\"text\"" || result.text_members != 1
        || !result.raw_text.starts_with('"')) {
      return std::nullopt;
    }
    return result.raw_text;
  }
  const auto content = skim_member(response.raw_result, "content");
  std::string_view block;
  if (!content || !Skimmer(*content).first_element(block)) {
    return std::nullopt;
  }
  const auto type = skim_member(block, "type");
  const auto text = skim_member(block, "text");
  if (!type || *type != "\"text\"" || !text || !text->starts_with('"')) {
    return std::nullopt;
  }
  return text;
}

std::optional<std::string_view> skim_content_argument(std::string_view line)
{
  const auto params = skim_member(line, "params");
  const auto arguments = params ? skim_member(*params, "arguments") : std::nullopt;
  const auto content = arguments ? skim_member(*arguments, "content") : std::nullopt;
  if (!content || !content->starts_with('"')) {
    return std::nullopt;
  }
  return content;
}

} // namespace fsguard
