#include "proxy/jsonrpc/ids.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "proxy/jsonrpc/lenient_json.hpp"

namespace fsguard {

namespace {

// Whether dump() writes `c`, inside a string, as it is: printable ASCII
// other than a quote or a backslash.
bool dumped_as_is(char c)
{
  return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\';
}

} // namespace

std::string id_key(const nlohmann::json& id)
{
  if (id.is_number_unsigned()) {
    return std::to_string(id.get<std::uint64_t>());
  }
  if (id.is_number_integer()) {
    return std::to_string(id.get<std::int64_t>());
  }
  if (id.is_number_float()) {
    const double value = id.get<double>();
    // An integral float is the integer the peer reads (JSON.parse reads
    // 7.0 as 7, and answers with id 7), up to 2^53, the last held exactly.
    if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) <= 0x1p53) {
      return std::to_string(static_cast<long long>(value));
    }
  }
  if (const auto* text = id.get_ptr<const std::string*>()) {
    if (std::all_of(text->begin(), text->end(), dumped_as_is)) {
      return '"' + *text + '"'; // as dump() writes it, without building a serializer
    }
  }
  return id.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string id_key_of_raw(std::string_view raw_id)
{
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  const std::string_view digits = raw_id.starts_with('-') ? raw_id.substr(1) : raw_id;
  if (!digits.empty() && digits.size() <= 18 && std::all_of(digits.begin(), digits.end(), is_digit)
      && (digits.front() != '0' || raw_id == "0")) {
    return std::string(raw_id); // an integer that std::to_string prints back as it is
  }
  if (raw_id.size() >= 2 && raw_id.front() == '"' && raw_id.back() == '"'
      && std::all_of(raw_id.begin() + 1, raw_id.end() - 1, dumped_as_is)) {
    return std::string(raw_id); // a string that dump() writes back as it is
  }
  auto id = nlohmann::json::parse(raw_id, nullptr, false);
  if (id.is_discarded()) {
    // Lone surrogate escapes, which JSON.parse accepts: repaired as a
    // client's id is, so an answer finds its request.
    if (auto replaced = replace_lone_surrogates(raw_id)) {
      id = nlohmann::json::parse(*replaced, nullptr, false);
    }
  }
  return id.is_discarded() ? std::string() : id_key(id);
}

std::string_view trailing_id(std::string_view tail)
{
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  std::size_t end = tail.size();
  while (end > 0 && is_space(tail[end - 1])) {
    --end;
  }
  if (end == 0 || tail[end - 1] != '}') {
    return {};
  }
  --end;
  while (end > 0 && is_space(tail[end - 1])) {
    --end;
  }
  std::size_t begin = end;
  if (begin > 0 && tail[begin - 1] == '"') {
    // A string: back to its opening quote, one not escaped by a backslash.
    for (begin = end - 1; begin > 0;) {
      --begin;
      if (tail[begin] != '"') {
        continue;
      }
      std::size_t backslashes = 0;
      while (begin > backslashes && tail[begin - 1 - backslashes] == '\\') {
        ++backslashes;
      }
      if (backslashes % 2 == 0) {
        break;
      }
    }
    if (tail[begin] != '"' || begin == end - 1) {
      return {};
    }
  } else {
    while (begin > 0 && (std::isdigit(static_cast<unsigned char>(tail[begin - 1])) != 0
                         || tail[begin - 1] == '-')) {
      --begin;
    }
    if (begin == end) {
      return {};
    }
  }
  const std::string_view value = tail.substr(begin, end - begin);
  std::size_t before = begin;
  while (before > 0 && is_space(tail[before - 1])) {
    --before;
  }
  if (before == 0 || tail[before - 1] != ':') {
    return {};
  }
  --before;
  while (before > 0 && is_space(tail[before - 1])) {
    --before;
  }
  if (before < 4 || tail.substr(before - 4, 4) != "\"id\"") {
    return {};
  }
  before -= 4;
  while (before > 0 && is_space(tail[before - 1])) {
    --before;
  }
  return before > 0 && (tail[before - 1] == ',' || tail[before - 1] == '{') ? value
                                                                              : std::string_view();
}

std::string answer_key_from_ends(std::string_view line)
{
  const std::string_view raw_id = answer_id_from_ends(line);
  return raw_id.empty() ? std::string() : id_key_of_raw(raw_id);
}

std::string_view answer_id_from_ends(std::string_view line)
{
  return line.starts_with(R"({"result":)") ? trailing_id(line) : std::string_view();
}

} // namespace fsguard
